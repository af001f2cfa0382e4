//! Sending a model call: the crate's reqwest client (one per endpoint, so its pool of
//! keep-alive connections serves every call made through it), the retries of
//! [`super::retry`], the two timeouts, and the reading of a whole or streamed reply.
//!
//! Everything here is async and runs on the process's one tokio runtime; the binding blocks
//! on it (with the GIL released) for the sync methods and awaits it for the async ones, so
//! both run the same code. Dropping a future (a cancelled task) drops the request, which
//! closes its connection.

use super::error::{LlmError, Phase};
use super::retry;
use super::{
    build_request, parse_reply, stream_decoder, Call, HttpRequest, Provider, Reply, StreamDecoder,
};
use futures::stream::BoxStream;
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use sse_stream::Sse;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The most of a whole (not streamed) reply that is read.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The most one event of a streamed reply may hold before the stream is refused (a server
/// that never ends an event must not fill the memory).
pub const MAX_EVENT: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct EndpointOptions {
    pub provider: Provider,
    /// Without a trailing slash.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// Sent with every request, after (so over) the codec's own headers.
    pub headers: Vec<(String, String)>,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub max_retries: u32,
}

pub struct Endpoint {
    opts: EndpointOptions,
    headers: HeaderMap,
    direct: bool,
    /// The client and the fork generation it was built in: a forked child must not use the
    /// parent's pooled connections, so it builds its own.
    client: Mutex<(u64, reqwest::Client)>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never shown.
        f.debug_struct("Endpoint")
            .field("provider", &self.opts.provider)
            .field("base_url", &self.opts.base_url)
            .field("model", &self.opts.model)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    pub fn new(opts: EndpointOptions) -> Result<Endpoint, String> {
        let url = url::Url::parse(&opts.base_url)
            .map_err(|e| format!("base_url {:?} is not a URL: {e}", opts.base_url))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "base_url must start with http:// or https://, got {:?}",
                opts.base_url
            ));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &opts.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name:?} is not a valid HTTP header name"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header {name} is not valid in HTTP"))?;
            headers.insert(name, value);
        }
        let direct = crate::net::is_loopback(&url);
        let client = build_client(&opts, direct)?;
        Ok(Endpoint {
            opts,
            headers,
            direct,
            client: Mutex::new((crate::runtime::fork_generation(), client)),
        })
    }

    pub fn options(&self) -> &EndpointOptions {
        &self.opts
    }

    fn client(&self) -> Result<reqwest::Client, LlmError> {
        let generation = crate::runtime::fork_generation();
        let mut slot = self
            .client
            .lock()
            .map_err(|_| LlmError::Request("the HTTP client is unusable".into()))?;
        if slot.0 != generation {
            *slot = (
                generation,
                build_client(&self.opts, self.direct).map_err(LlmError::Request)?,
            );
        }
        Ok(slot.1.clone())
    }

    /// The HTTP request for `call`.
    pub fn request(&self, call: &Call) -> Result<HttpRequest, LlmError> {
        let o = &self.opts;
        build_request(
            o.provider,
            &o.base_url,
            &o.model,
            o.api_key.as_deref(),
            call,
        )
    }

    /// Sends `req`, retrying what is worth it; returns the successful response and the number
    /// of attempts it took.
    pub async fn send(&self, req: &HttpRequest) -> Result<(reqwest::Response, u32), LlmError> {
        let client = self.client()?;
        let mut headers = HeaderMap::with_capacity(req.headers.len() + self.headers.len());
        for (name, value) in &req.headers {
            let value = HeaderValue::from_str(value).map_err(|_| {
                LlmError::Request(format!("the {name} header is not valid in HTTP"))
            })?;
            headers.insert(*name, value);
        }
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let sent = client
                .post(&req.url)
                .headers(headers.clone())
                .body(req.body.clone())
                .send()
                .await;
            let last = attempt > self.opts.max_retries;
            let asked = match sent {
                Ok(resp) if resp.status().is_success() => return Ok((resp, attempt)),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    if last || !retry::retryable_status(status) {
                        let body = read_body(resp).await.unwrap_or_default();
                        let title = self.opts.provider.title();
                        return Err(
                            self.redact(LlmError::from_status(title, status, &body, attempt))
                        );
                    }
                    let h = |n: &str| resp.headers().get(n).and_then(|v| v.to_str().ok());
                    let asked = retry::retry_after(
                        h("retry-after-ms"),
                        h("retry-after"),
                        SystemTime::now(),
                    );
                    drop(resp); // its connection is not reused; the next attempt may open one
                    asked
                }
                Err(e) => {
                    let err = self.classify(&e, attempt);
                    let worth = matches!(
                        err,
                        LlmError::Unreachable { .. }
                            | LlmError::Timeout {
                                phase: Phase::Connect,
                                ..
                            }
                    );
                    if last || !worth {
                        return Err(err);
                    }
                    None
                }
            };
            tokio::time::sleep(retry::delay(attempt - 1, asked, retry::jitter())).await;
        }
    }

    /// One whole (not streamed) reply.
    pub async fn chat(&self, call: &Call) -> Result<Reply, LlmError> {
        let req = self.request(call)?;
        let (resp, attempts) = self.send(&req).await?;
        let body = read_body(resp)
            .await
            .map_err(|e| self.classify(&e, attempts))?;
        parse_reply(self.opts.provider, &body).map_err(|e| self.redact(e))
    }

    /// A streamed reply: the request is sent (and retried) now, the events are read as
    /// [`ReplyStream::next`] asks for them.
    pub async fn stream(self: Arc<Self>, call: &Call) -> Result<ReplyStream, LlmError> {
        let mut call = call.clone();
        call.stream = true;
        let req = self.request(&call)?;
        let (resp, attempts) = self.send(&req).await?;
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let mut stream = ReplyStream {
            decoder: Some(stream_decoder(self.opts.provider)),
            endpoint: self.clone(),
            events: None,
            pending: VecDeque::new(),
            reply: None,
            attempts,
            seen: 0,
        };
        if is_sse {
            stream.events = Some(crate::sse::model_events(resp.bytes_stream(), MAX_EVENT));
        } else {
            // A server that ignored `stream` answered with a whole reply: one delta.
            let body = read_body(resp)
                .await
                .map_err(|e| self.classify(&e, attempts))?;
            let reply = parse_reply(self.opts.provider, &body).map_err(|e| self.redact(e))?;
            if !reply.content.is_empty() {
                stream.pending.push_back(reply.content.clone());
            }
            stream.reply = Some(reply);
            stream.decoder = None;
        }
        Ok(stream)
    }

    fn redact(&self, err: LlmError) -> LlmError {
        err.redacted(self.opts.api_key.as_deref())
    }

    /// A reqwest failure in this crate's terms.
    fn classify(&self, e: &reqwest::Error, attempts: u32) -> LlmError {
        let url = self.opts.base_url.clone();
        if e.is_timeout() {
            let (phase, limit) = if e.is_connect() {
                (Phase::Connect, self.opts.connect_timeout)
            } else {
                (Phase::Read, self.opts.read_timeout)
            };
            return LlmError::Timeout {
                phase,
                seconds: limit.as_secs_f64(),
                url,
                attempts,
            };
        }
        let mut cause: &dyn std::error::Error = e;
        while let Some(next) = cause.source() {
            cause = next;
        }
        let reason = if e.is_connect() {
            format!("connection failed ({cause})")
        } else {
            format!("the connection broke ({cause})")
        };
        self.redact(LlmError::Unreachable {
            url,
            reason,
            attempts,
        })
    }
}

fn build_client(opts: &EndpointOptions, direct: bool) -> Result<reqwest::Client, String> {
    crate::net::http_client(crate::net::ClientOptions {
        user_agent: Some(concat!("agentmaker/", env!("CARGO_PKG_VERSION"))),
        connect_timeout: Some(opts.connect_timeout),
        read_timeout: Some(opts.read_timeout),
        direct,
        http2: true, // the providers' APIs all offer it: concurrent calls share a connection
    })
}

async fn read_body(mut resp: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        let room = MAX_BODY.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if room < chunk.len() {
            break; // the rest would not be read anyway; what is kept will not parse
        }
    }
    Ok(body)
}

/// A streamed reply being read.
pub struct ReplyStream {
    endpoint: Arc<Endpoint>,
    /// The reply's events (see [`crate::sse::model_events`]); none once over.
    events: Option<BoxStream<'static, Result<Sse, sse_stream::Error>>>,
    decoder: Option<Box<dyn StreamDecoder>>,
    pending: VecDeque<String>,
    reply: Option<Reply>,
    attempts: u32,
    /// The events decoded so far.
    seen: usize,
}

impl ReplyStream {
    /// The next text delta; None once the stream is over (then [`ReplyStream::reply`] holds
    /// the whole reply, tool calls assembled).
    pub async fn next(&mut self) -> Result<Option<String>, LlmError> {
        loop {
            if let Some(delta) = self.pending.pop_front() {
                return Ok(Some(delta));
            }
            let Some(events) = self.events.as_mut() else {
                return Ok(None);
            };
            let result = match events.next().await {
                Some(Ok(event)) => self.decode(&event),
                Some(Err(e)) => Err(self.unreadable(e)),
                None => self.end(),
            };
            if let Err(e) = result {
                self.events = None;
                self.decoder = None;
                return Err(e);
            }
        }
    }

    fn decode(&mut self, event: &Sse) -> Result<(), LlmError> {
        let Some(decoder) = self.decoder.as_mut() else {
            return Ok(());
        };
        self.seen += 1;
        let mut text = Vec::new();
        decoder
            .event(event, &mut text)
            .map_err(|e| e.redacted(self.endpoint.opts.api_key.as_deref()))?;
        self.pending.extend(text);
        Ok(())
    }

    /// The body ended.
    fn end(&mut self) -> Result<(), LlmError> {
        self.events = None;
        let Some(decoder) = self.decoder.take() else {
            return Ok(());
        };
        if self.seen == 0 {
            return Err(LlmError::Reply(
                "the stream ended without a single event".into(),
            ));
        }
        self.reply = Some(decoder.finish());
        Ok(())
    }

    /// The stream's error in this crate's terms: a broken connection or a timeout as for a
    /// whole reply, an event over [`MAX_EVENT`] or bytes the parser refuses as a bad reply.
    fn unreadable(&self, error: sse_stream::Error) -> LlmError {
        let sse_stream::Error::Body(body) = error else {
            return LlmError::Reply(format!(
                "the stream is not valid server-sent events: {error}"
            ));
        };
        let io = body.downcast_ref::<std::io::Error>();
        let http = io
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<reqwest::Error>());
        match (http, io) {
            (Some(http), _) => self.endpoint.classify(http, self.attempts),
            (None, Some(io)) => LlmError::Reply(io.to_string()),
            (None, None) => LlmError::Reply(body.to_string()),
        }
    }

    /// The whole reply, once [`ReplyStream::next`] returned None.
    pub fn reply(&self) -> Option<&Reply> {
        self.reply.as_ref()
    }
}
