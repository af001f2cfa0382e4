//! The streamable-HTTP transport: URL rules, TLS, and headers on every request.
//!
//! `auth` is either a bearer token or a [`HeaderSource`] asked for headers before every HTTP
//! request (so a token can be refreshed between calls). An `httpx.Auth` object is not
//! accepted: its protocol is a generator that receives httpx `Request`/`Response` objects and
//! may resend requests, which only works when httpx itself performs the HTTP exchange; here the
//! exchange is made by reqwest in Rust, so there is no httpx request for it to act on.

use super::bounded::bounded_message;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ClientResult, CustomResult, ErrorCode,
    ErrorData, JsonRpcMessage, JsonRpcRequest, RequestId, ServerRequest, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Once};

/// Replies to the server's own requests that may wait to be posted at once; more are dropped.
/// rmcp posts replies one at a time, each allowed 5 s, on the queue our `notifications/cancelled`
/// also take: a server that holds reply POSTs open delays the cancellations sent to it (it
/// alone; calls and other servers are not held up), by at most this many times 5 s, after which
/// no more replies are tried (see [`OwnMessagesAnswered`]).
pub const MAX_REPLIES_IN_FLIGHT: usize = 32;

/// Calls awaiting their result whose ids are remembered (see [`OwnMessagesAnswered`]); past
/// this many (calls the server never answered and we never cancelled), the oldest is forgotten.
const MAX_CALL_IDS: usize = 4096;

/// The ids of our `tools/call` requests still waiting for an answer, oldest first. An id
/// leaves when its answer comes or we cancel the call (a timeout cancels it too); beyond
/// [`MAX_CALL_IDS`] the oldest is forgotten, so live calls keep theirs.
#[derive(Default)]
struct CallIds {
    /// Id to the number it was filed under (an id may be reused after it left).
    live: HashMap<RequestId, u64>,
    /// Filing order; entries whose id left (or was filed again) are skipped and compacted.
    order: std::collections::VecDeque<(u64, RequestId)>,
    filed: u64,
}

impl CallIds {
    fn insert(&mut self, id: RequestId) {
        while self.live.len() >= MAX_CALL_IDS {
            let Some((n, old)) = self.order.pop_front() else {
                break;
            };
            if self.live.get(&old) == Some(&n) {
                self.live.remove(&old);
            }
        }
        self.filed += 1;
        self.live.insert(id.clone(), self.filed);
        self.order.push_back((self.filed, id));
        if self.order.len() > 2 * MAX_CALL_IDS {
            let live = &self.live;
            self.order.retain(|(n, id)| live.get(id) == Some(n));
        }
    }

    fn remove(&mut self, id: &RequestId) -> bool {
        self.live.remove(id).is_some()
    }
}

/// rmcp's HTTP transport, with what the server sends on its own handled here instead of by
/// rmcp's session: `ping` gets its empty
/// result, any other request "method not found", notifications are dropped. rmcp's session
/// spawns a task per such message and takes them faster than those tasks end (300,000 of them
/// on one call's event stream took the client to 900 MB). Replies are handed to rmcp to post
/// (one at a time), at most [`MAX_REPLIES_IN_FLIGHT`] waiting; beyond that, and for good once
/// one could not be posted, requests get no answer.
///
/// It also keeps the answer to a `tools/call` whose content blocks include a kind rmcp does not
/// know: rmcp leaves such a result untyped, and its `call_tool` refused it. Those blocks are
/// named instead, as over stdio; only answers to our `tools/call` requests are touched.
pub struct OwnMessagesAnswered<T> {
    inner: T,
    replies: Arc<tokio::sync::Semaphore>,
    /// Turns true when a reply could not be posted (the server fails or holds them): no more
    /// are tried, and those still waiting are withdrawn (rmcp skips a queued message whose
    /// sender is gone), so they do not hold up our `notifications/cancelled`.
    replies_failed: tokio::sync::watch::Sender<bool>,
    /// Ids of the `tools/call` requests sent and not answered or cancelled yet.
    calls: CallIds,
}

impl<T> OwnMessagesAnswered<T> {
    pub fn new(inner: T) -> Self {
        OwnMessagesAnswered {
            inner,
            replies: Arc::new(tokio::sync::Semaphore::new(MAX_REPLIES_IN_FLIGHT)),
            replies_failed: tokio::sync::watch::Sender::new(false),
            calls: Default::default(),
        }
    }
}

impl<T: Transport<RoleClient>> OwnMessagesAnswered<T> {
    fn answer(&mut self, request: JsonRpcRequest<ServerRequest>) {
        if *self.replies_failed.borrow() {
            return;
        }
        let Ok(permit) = self.replies.clone().try_acquire_owned() else {
            return;
        };
        let method: Option<Cow<'_, str>> = match &request.request {
            ServerRequest::PingRequest(_) => None,
            ServerRequest::CreateMessageRequest(_) => Some("sampling/createMessage".into()),
            ServerRequest::ListRootsRequest(_) => Some("roots/list".into()),
            ServerRequest::ElicitRequest(_) => Some("elicitation/create".into()),
            ServerRequest::CustomRequest(custom) => Some(custom.method.as_str().into()),
            // A kind added to rmcp later: its method as it serializes.
            other => Some(
                serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.get("method")?.as_str().map(|m| m.to_owned().into()))
                    .unwrap_or_else(|| "a request of a kind this client does not know".into()),
            ),
        };
        let reply = match method {
            None => JsonRpcMessage::response(ClientResult::empty(()), request.id),
            Some(method) => {
                let error = ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    super::bounded::method_not_offered(&method),
                    None,
                );
                JsonRpcMessage::error(error, Some(request.id))
            }
        };
        let sent = self.inner.send(reply);
        let failed = self.replies_failed.clone();
        let mut withdrawn = self.replies_failed.subscribe();
        tokio::spawn(async move {
            tokio::select! {
                result = sent => if result.is_err() {
                    failed.send_replace(true);
                },
                _ = withdrawn.wait_for(|failed| *failed) => {}
            }
            drop(permit);
        });
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for OwnMessagesAnswered<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::CallToolRequest(_)) =>
            {
                self.calls.insert(request.id.clone());
            }
            JsonRpcMessage::Notification(note) => {
                if let ClientNotification::CancelledNotification(cancelled) = &note.notification {
                    if let Some(id) = &cancelled.params.request_id {
                        self.calls.remove(id);
                    }
                }
            }
            _ => {}
        }
        self.inner.send(item)
    }

    /// Cancel-safe, as rmcp needs (it polls this in a `select!`): the only wait is the inner
    /// transport's own `receive`.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.inner.receive().await? {
                JsonRpcMessage::Request(request) => self.answer(request),
                JsonRpcMessage::Notification(_) => {}
                JsonRpcMessage::Response(mut answer) => {
                    // A tools/call result with content blocks of a kind rmcp does not know
                    // stays an untyped value, which rmcp's `call_tool` refuses: name those
                    // blocks instead, as over stdio, so the rest of the answer is kept.
                    let is_call = self.calls.remove(&answer.id);
                    if let ServerResult::CustomResult(CustomResult(value)) = &mut answer.result {
                        if let Some(named) = is_call
                            .then(|| super::bounded::unknown_blocks_named(value))
                            .flatten()
                        {
                            answer.result = ServerResult::CallToolResult(named);
                        }
                    }
                    return Some(JsonRpcMessage::Response(answer));
                }
                JsonRpcMessage::Error(error) => {
                    if let Some(id) = &error.id {
                        self.calls.remove(id);
                    }
                    return Some(JsonRpcMessage::Error(error));
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Supplies extra headers for each HTTP request (a Python callable in the binding). It is
/// called on a blocking thread, never on the async executor.
pub trait HeaderSource: Send + Sync {
    fn headers(&self) -> Result<Vec<(String, String)>, String>;
}

/// Why a URL was refused before connecting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("MCP URL must be an absolute http:// or https:// endpoint")]
    NotHttp,
    #[error("MCP URL must not contain embedded credentials; pass them with headers= or auth=")]
    Credentials,
    #[error("cleartext MCP HTTP is refused for non-loopback hosts; use https:// or pass allow_insecure_http=True explicitly")]
    Insecure,
}

/// Applies the URL rules: http(s) with a host, no `user:password@`, and `http` only to a
/// loopback host (`localhost`, 127.0.0.0/8, ::1; other names are not resolved) unless
/// `allow_insecure_http`.
pub fn check_url(url: &str, allow_insecure_http: bool) -> Result<reqwest::Url, UrlError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| UrlError::NotHttp)?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(UrlError::NotHttp);
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(UrlError::Credentials);
    }
    if parsed.scheme() == "http" && !allow_insecure_http {
        let loopback = match parsed.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        if !loopback {
            return Err(UrlError::Insecure);
        }
    }
    Ok(parsed)
}

/// Parses user headers; names and values must be legal HTTP.
pub fn parse_headers(
    pairs: &[(String, String)],
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let mut out = HashMap::with_capacity(pairs.len());
    for (k, v) in pairs {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("invalid HTTP header name {k:?}"))?;
        let value =
            HeaderValue::from_str(v).map_err(|_| format!("invalid value for HTTP header {k:?}"))?;
        out.insert(name, value);
    }
    Ok(out)
}

/// reqwest with rustls on the `ring` provider (installed once for the process; if the
/// application already installed a provider, that one is used). Redirects are not followed:
/// a redirect would replay our headers to wherever the server points.
pub fn http_client() -> Result<reqwest::Client, String> {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("could not build the HTTP client: {e}"))
}

/// reqwest plus per-request headers from a [`HeaderSource`].
#[derive(Clone)]
pub struct HeaderClient {
    pub inner: reqwest::Client,
    pub source: Option<Arc<dyn HeaderSource>>,
}

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl HeaderClient {
    async fn merged(
        &self,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<HashMap<HeaderName, HeaderValue>> {
        let Some(source) = self.source.clone() else {
            return Ok(headers);
        };
        let pairs = tokio::task::spawn_blocking(move || source.headers())
            .await?
            .map_err(|e| {
                StreamableHttpError::Io(std::io::Error::other(format!("auth callable failed: {e}")))
            })?;
        let extra = parse_headers(&pairs).map_err(|e| {
            StreamableHttpError::Io(std::io::Error::other(format!("auth callable returned {e}")))
        })?;
        headers.extend(extra);
        Ok(headers)
    }
}

/// The server's event stream, each event held to [`bounded::MAX_ANSWER_VALUES`] before rmcp
/// parses it (see [`bounded_event`]).
///
/// On the stream answering our request `awaited`, an event over rmcp's size limit (16 MiB),
/// which ends the stream, becomes an error answer to that request saying so: rmcp reported it
/// as "the server closed the connection".
///
/// [`bounded::MAX_ANSWER_VALUES`]: super::bounded::MAX_ANSWER_VALUES
fn bounded_events(events: BoxedSseResponse, awaited: Option<RequestId>) -> BoxedSseResponse {
    use futures::StreamExt;
    events
        .map(move |event| match event {
            Ok(event) => {
                let mut event = bounded_event(event);
                if let Some(answer) = awaited.as_ref().and_then(|id| {
                    event
                        .data
                        .as_deref()
                        .and_then(|data| error_without_id(data, id))
                }) {
                    event.data = Some(answer);
                }
                Ok(event)
            }
            Err(e) => match awaited.as_ref().filter(|_| is_event_too_large(&e)) {
                Some(id) => Ok(too_large_answer(id, &e)),
                None => Err(e),
            },
        })
        .boxed()
}

/// An error with no id (`"id": null`, or none) on the stream answering our request `id`,
/// given that id: it is that request's error (as in a JSON body, see [`answered_here`]); rmcp
/// would drop it, and the call read as if the server had closed the connection.
fn error_without_id(data: &str, id: &RequestId) -> Option<String> {
    memchr::memmem::find(data.as_bytes(), b"\"error\"")?;
    let message = serde_json::from_str::<super::bounded::Envelope<'_>>(data).ok()?;
    let unnamed = message.id.map_or(true, |id| id.get() == "null");
    if !unnamed || message.method.is_some() || message.result.is_some() {
        return None;
    }
    let id = serde_json::to_string(id).ok()?;
    let error = message.error?.get();
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#))
}

/// rmcp's error for an event over its size limit (its own test is private; its text is
/// "SSE event exceeded the maximum size of N bytes", rmcp being pinned exactly).
fn is_event_too_large(error: &sse_stream::Error) -> bool {
    matches!(error, sse_stream::Error::Body(_))
        && error.to_string().contains("exceeded the maximum size")
}

/// An event carrying the error answer to request `id` for an event too large to read.
fn too_large_answer(id: &RequestId, error: &sse_stream::Error) -> sse_stream::Sse {
    let id = serde_json::to_string(id).unwrap_or_else(|_| "null".into());
    let why = error.to_string();
    let why = why.rsplit(": ").next().unwrap_or(&why);
    let message = format!("{why}; the answer was not read");
    sse_stream::Sse::default().data(super::bounded::error_answer(&id, -32603, &message))
}

/// An event's message made safe for rmcp to parse ([`bounded_message`]).
fn bounded_event(mut event: sse_stream::Sse) -> sse_stream::Sse {
    event.data = event.data.map(bounded_message);
    event
}

/// Whether `message`'s answer is read by `http_post`: a `tools/call` or a `tools/list` (sent
/// as a custom request: the listing is read raw, see `client::list_all`), which carry the
/// server's data in bulk, and `initialize`, whose session id is checked there.
fn carries_data(message: &ClientJsonRpcMessage) -> bool {
    let JsonRpcMessage::Request(request) = message else {
        return false;
    };
    match &request.request {
        ClientRequest::CallToolRequest(_)
        | ClientRequest::ListToolsRequest(_)
        | ClientRequest::InitializeRequest(_) => true,
        ClientRequest::CustomRequest(custom) => custom.method == "tools/list",
        _ => false,
    }
}

/// The id of the request `message` is, whose answer the POST's response must carry.
fn awaited_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

/// A POST of a request must be answered in its own response (a JSON body or an event stream,
/// says the streamable HTTP transport). A `202 Accepted`, or a JSON body that is not the
/// answer to that request, leaves the call with nothing that could ever answer it: rmcp would
/// keep it waiting until its timeout (for ever with `timeout=None`). It fails at once instead.
fn answered_here(
    awaited: Option<RequestId>,
    response: HttpResult<StreamableHttpPostResponse>,
) -> HttpResult<StreamableHttpPostResponse> {
    let response = match response {
        Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
            StreamableHttpPostResponse::Sse(bounded_events(events, awaited.clone()), session),
        ),
        // An error without an id (JSON-RPC's `"id": null`, for a request the server could
        // not read, or a failure it could not tie to one) in the response to our request is
        // that request's answer: said as an error for another request, it read as nonsense.
        Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(mut error), session))
            if error.id.is_none() && awaited.is_some() =>
        {
            error.id = awaited.clone();
            Ok(StreamableHttpPostResponse::Json(
                JsonRpcMessage::Error(error),
                session,
            ))
        }
        other => other,
    };
    let Some(id) = awaited else {
        return response;
    };
    let refused = |why: String| Err(StreamableHttpError::UnexpectedServerResponse(why.into()));
    match &response {
        Ok(StreamableHttpPostResponse::Accepted) => refused(format!(
            "the server accepted request {id} without answering it (HTTP 202 or 204)"
        )),
        Ok(StreamableHttpPostResponse::Json(message, _)) => match message {
            JsonRpcMessage::Response(answer) if answer.id == id => response,
            JsonRpcMessage::Error(error) if error.id.as_ref() == Some(&id) => response,
            JsonRpcMessage::Error(error) => refused(format!(
                "the server answered request {id} with an error for another request: {}",
                super::sanitize::sanitize_marked(&error.error.message, 200)
            )),
            _ => refused(format!(
                "the server's JSON response to request {id} is not its answer"
            )),
        },
        _ => response,
    }
}

impl StreamableHttpClient for HeaderClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        // rmcp's worker posts through `post_message_with_response_limits`; its other entry
        // points (this one, and the SSE-size one, which defaults to this) come here.
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let headers = self.merged(custom_headers).await?;
        let awaited = awaited_id(&message);
        // The two answers that carry the server's data in bulk are read by us (their values
        // counted before anything is parsed); the rest by rmcp.
        if carries_data(&message) {
            let response = super::http_post::post(
                &self.inner,
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            )
            .await;
            return answered_here(awaited, response);
        }
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            )
            .await;
        answered_here(awaited, response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let headers = self.merged(custom_headers).await?;
        self.inner
            .delete_session(uri, session_id, auth_header, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxedSseResponse> {
        let headers = self.merged(custom_headers).await?;
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, headers)
            .await
            .map(|events| bounded_events(events, None))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxedSseResponse> {
        let headers = self.merged(custom_headers).await?;
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                headers,
                max_sse_event_size,
            )
            .await
            .map(|events| bounded_events(events, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::bounded::UNREAD_KEY;

    #[test]
    fn url_rules() {
        assert!(check_url("https://mcp.example.com/mcp", false).is_ok());
        assert!(check_url("http://127.0.0.1:8000/mcp", false).is_ok());
        assert!(check_url("http://127.9.9.9/mcp", false).is_ok());
        assert!(check_url("http://localhost:1/mcp", false).is_ok());
        assert!(check_url("http://[::1]:1/mcp", false).is_ok());
        assert_eq!(
            check_url("http://mcp.example.com/mcp", false).unwrap_err(),
            UrlError::Insecure
        );
        assert_eq!(
            check_url("http://10.0.0.1/mcp", false).unwrap_err(),
            UrlError::Insecure
        );
        assert_eq!(
            check_url("http://localhost.evil.com/mcp", false).unwrap_err(),
            UrlError::Insecure
        );
        assert!(check_url("http://mcp.example.com/mcp", true).is_ok());
        assert_eq!(
            check_url("https://user:pw@mcp.example.com/", false).unwrap_err(),
            UrlError::Credentials
        );
        assert_eq!(
            check_url("https://user@mcp.example.com/", false).unwrap_err(),
            UrlError::Credentials
        );
        assert_eq!(check_url("ftp://x/", false).unwrap_err(), UrlError::NotHttp);
        assert_eq!(
            check_url("/relative", false).unwrap_err(),
            UrlError::NotHttp
        );
        assert_eq!(
            check_url("file:///etc/passwd", false).unwrap_err(),
            UrlError::NotHttp
        );
    }

    #[test]
    fn header_parsing() {
        let h = parse_headers(&[("X-Api-Key".into(), "k".into())]).unwrap();
        assert_eq!(h.get(&HeaderName::from_static("x-api-key")).unwrap(), "k");
        assert!(parse_headers(&[("bad name".into(), "v".into())]).is_err());
        assert!(parse_headers(&[("x".into(), "a\nb".into())]).is_err());
    }

    /// An event over rmcp's size limit fails the request its stream answers, saying so; on a
    /// stream answering nothing (the GET stream) and for other errors, the error stays.
    #[test]
    fn an_event_too_large_to_read_answers_the_request_with_the_reason() {
        use futures::StreamExt;
        let too_large = || {
            sse_stream::Error::Body(Box::new(std::io::Error::other(
                "SSE event exceeded the maximum size of 16777216 bytes",
            )))
        };
        let events = |errors: Vec<sse_stream::Error>| -> BoxedSseResponse {
            futures::stream::iter(errors.into_iter().map(Err)).boxed()
        };
        let run = |stream: BoxedSseResponse| {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(stream.collect::<Vec<_>>())
        };
        let got = run(bounded_events(
            events(vec![too_large()]),
            Some(RequestId::Number(7)),
        ));
        let answer: serde_json::Value =
            serde_json::from_str(got[0].as_ref().unwrap().data.as_deref().unwrap()).unwrap();
        assert_eq!(
            answer,
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603,
                "message": "SSE event exceeded the maximum size of 16777216 bytes; the answer was not read"}})
        );
        assert!(run(bounded_events(events(vec![too_large()]), None))[0].is_err());
        let other = sse_stream::Error::Body(Box::new(std::io::Error::other("connection reset")));
        assert!(run(bounded_events(
            events(vec![other]),
            Some(RequestId::Number(7))
        ))[0]
            .is_err());
        assert!(run(bounded_events(
            events(vec![sse_stream::Error::InvalidLine]),
            Some(RequestId::Number(7))
        ))[0]
            .is_err());
    }

    /// An id-less error on the stream answering request 7 is request 7's; anything else on it
    /// is left as it is.
    #[test]
    fn an_error_without_an_id_answers_the_request_its_stream_answers() {
        use futures::StreamExt;
        let event = |data: &str| -> Result<sse_stream::Sse, sse_stream::Error> {
            Ok(sse_stream::Sse::default().data(data))
        };
        let sent = [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"down"}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"down"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"down"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"error":1}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        ];
        let run = |awaited: Option<RequestId>| {
            let events = futures::stream::iter(sent.map(event)).boxed();
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(bounded_events(events, awaited).collect::<Vec<_>>())
                .into_iter()
                .map(|e| e.unwrap().data.unwrap())
                .collect::<Vec<_>>()
        };
        let answered = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"down"}}"#;
        let got = run(Some(RequestId::Number(7)));
        assert_eq!(got[..2], [answered, answered]);
        assert_eq!(got[2..], sent[2..]);
        assert_eq!(run(None), sent);
    }

    #[test]
    fn client_builds_with_ring() {
        assert!(http_client().is_ok());
    }

    /// A transport whose sends never finish (a server that holds our reply POSTs open), or
    /// fail at once.
    struct Stalled {
        incoming: tokio::sync::mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
        sent: Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
        /// How many of the first sends fail (the rest never finish).
        fail: usize,
    }

    impl Transport<RoleClient> for Stalled {
        type Error = std::io::Error;

        fn send(
            &mut self,
            item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            self.sent
                .lock()
                .unwrap()
                .push(serde_json::to_value(&item).unwrap());
            let fail = self.sent.lock().unwrap().len() <= self.fail;
            async move {
                if fail {
                    return Err(std::io::Error::other("refused"));
                }
                std::future::pending().await
            }
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.incoming.recv().await
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    type Incoming = tokio::sync::mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>;
    type Sent = Arc<std::sync::Mutex<Vec<serde_json::Value>>>;

    fn stalled(fail: usize) -> (OwnMessagesAnswered<Stalled>, Incoming, Sent) {
        let (tx, incoming) = tokio::sync::mpsc::unbounded_channel();
        let sent = Sent::default();
        let transport = OwnMessagesAnswered::new(Stalled {
            incoming,
            sent: sent.clone(),
            fail,
        });
        (transport, tx, sent)
    }

    fn message(tx: &Incoming, v: serde_json::Value) {
        tx.send(serde_json::from_value(v).unwrap()).unwrap();
    }

    /// `pings` pings from the server (ids 0, 1...), then an answer to our request `answer`.
    fn pings_then_an_answer(tx: &Incoming, pings: i64, answer: i64) {
        for i in 0..pings {
            message(
                tx,
                serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "ping"}),
            );
        }
        message(
            tx,
            serde_json::json!({"jsonrpc": "2.0", "id": answer, "result": {}}),
        );
    }

    fn call(id: i64) -> TxJsonRpcMessage<RoleClient> {
        serde_json::from_value(serde_json::json!({"jsonrpc": "2.0", "id": id,
            "method": "tools/call", "params": {"name": "t", "arguments": {}}}))
        .unwrap()
    }

    /// A result with a text block and a block of a kind rmcp does not know.
    fn odd_result(id: i64) -> serde_json::Value {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
            {"type": "text", "text": "kept"}, {"type": "video"}]}})
    }

    #[tokio::test]
    async fn the_servers_own_messages_are_answered_in_bounded_numbers_and_never_passed_on() {
        let (mut transport, tx, sent) = stalled(0);
        drop(transport.send(call(7))); // the call is recorded when sent
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "x/\u{202e}odd"}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x"}}),
        );
        for i in 0..200 {
            message(
                &tx,
                serde_json::json!({"jsonrpc": "2.0", "id": 100 + i, "method": "ping"}),
            );
        }
        // The answer to our call, with a content block of an unknown kind: the only message
        // passed on, with that block named.
        message(&tx, odd_result(7));
        let Some(JsonRpcMessage::Response(answer)) = transport.receive().await else {
            panic!("the answer to our request is passed on, and only it");
        };
        let ServerResult::CallToolResult(result) = answer.result else {
            panic!("{:?}", answer.result);
        };
        let texts: Vec<_> = result
            .content
            .iter()
            .map(|c| c.as_text().unwrap().text.clone())
            .collect();
        assert_eq!(texts, ["kept", "[unsupported content block: video]"]);
        tokio::task::yield_now().await;
        let sent = sent.lock().unwrap().clone();
        // sent[0] is the call. Replies are never posted here, so only the first
        // MAX_REPLIES_IN_FLIGHT requests got one.
        assert_eq!(sent.len(), 1 + MAX_REPLIES_IN_FLIGHT);
        assert_eq!(
            sent[1],
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );
        let not_found = |id: serde_json::Value, method: &str| {
            serde_json::json!({"jsonrpc": "2.0",
            "id": id, "error": {"code": -32601,
            "message": format!("Method not found: this client answers only ping, not {method}")}})
        };
        assert_eq!(sent[2], not_found("r".into(), "roots/list"));
        assert_eq!(sent[3], not_found(2.into(), "x/odd"));
        assert_eq!(
            sent[4],
            serde_json::json!({"jsonrpc": "2.0", "id": 100, "result": {}})
        );
    }

    #[tokio::test]
    async fn only_answers_to_our_calls_have_unknown_blocks_named() {
        let (mut transport, tx, _sent) = stalled(0);
        drop(transport.send(call(1)));
        // An answer to another request (a listing, say), or a second answer to the call.
        for _ in 0..2 {
            message(&tx, odd_result(1));
        }
        message(&tx, odd_result(2));
        let mut kinds = Vec::new();
        for _ in 0..3 {
            let Some(JsonRpcMessage::Response(answer)) = transport.receive().await else {
                panic!("an answer is passed on");
            };
            kinds.push(matches!(answer.result, ServerResult::CallToolResult(_)));
        }
        assert_eq!(kinds, [true, false, false]);
    }

    /// Whether the answers to `ids` (each with an unknown block) had that block named, i.e.
    /// were recognised as answers to our calls.
    async fn named(
        transport: &mut OwnMessagesAnswered<Stalled>,
        tx: &Incoming,
        ids: &[i64],
    ) -> Vec<bool> {
        let mut out = Vec::new();
        for &id in ids {
            message(tx, odd_result(id));
            let Some(JsonRpcMessage::Response(answer)) = transport.receive().await else {
                panic!("an answer is passed on");
            };
            out.push(matches!(answer.result, ServerResult::CallToolResult(_)));
        }
        out
    }

    #[test]
    fn events_of_too_many_values_are_cut_before_rmcp_parses_them() {
        let zeros = vec!["0"; 300_000].join(",");
        let event = |data: String| sse_stream::Sse {
            data: Some(data),
            ..Default::default()
        };
        let parsed = |e: sse_stream::Sse| -> serde_json::Value {
            serde_json::from_str(&bounded_event(e).data.unwrap()).unwrap()
        };
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"kept"}}],"structuredContent":[{zeros}]}}}}"#
        );
        assert_eq!(
            parsed(event(answer)),
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {
                "content": [{"type": "text", "text": "kept"}], "structuredContent": {UNREAD_KEY: true}}})
        );
        let blocks = vec![r#"{"type":"text","text":""}"#; 100_000].join(",");
        let v = parsed(event(format!(
            r#"{{"jsonrpc":"2.0","id":"x","result":{{"content":[{blocks}]}}}}"#
        )));
        assert_eq!(v["id"], "x");
        assert_eq!(
            v["error"]["message"],
            super::super::bounded::too_many_values()
        );
        let v = parsed(event(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":[{zeros}]}}}}"#
        )));
        assert_eq!(v["method"], "notifications/agentmaker/dropped");
        // The budget cannot be dodged by putting the values in the id.
        let v = parsed(event(format!(
            r#"{{"jsonrpc":"2.0","id":[{zeros}],"result":{{}}}}"#
        )));
        assert_eq!(v["method"], "notifications/agentmaker/dropped");
        // Small events pass as they are.
        let small = r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":[0,0]}}"#;
        assert_eq!(bounded_event(event(small.into())).data.unwrap(), small);
    }

    #[tokio::test]
    async fn a_cancelled_call_is_no_longer_ours() {
        let (mut transport, tx, _sent) = stalled(0);
        drop(transport.send(call(1)));
        drop(transport.send(call(2)));
        let cancel = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "timed out"}});
        drop(transport.send(serde_json::from_value(cancel).unwrap()));
        assert_eq!(named(&mut transport, &tx, &[1, 2]).await, [false, true]);
    }

    #[tokio::test]
    async fn past_the_bound_the_oldest_call_is_forgotten_not_the_live_ones() {
        let (mut transport, tx, _sent) = stalled(0);
        // Calls the server never answers, then two live ones: only the oldest id makes room.
        let abandoned = MAX_CALL_IDS as i64 - 1;
        for id in 0..abandoned {
            drop(transport.send(call(id)));
        }
        drop(transport.send(call(9000)));
        drop(transport.send(call(9001)));
        assert_eq!(transport.calls.live.len(), MAX_CALL_IDS);
        let got = named(&mut transport, &tx, &[9000, 9001, 0, 1]).await;
        assert_eq!(got, [true, true, false, true]);
        // Answered ids leave the filing order too, so it stays near the live set.
        for id in 2..abandoned {
            message(&tx, odd_result(id));
            transport.receive().await.unwrap();
        }
        for id in 10_000..10_000 + 2 * MAX_CALL_IDS as i64 {
            drop(transport.send(call(id)));
            message(&tx, odd_result(id));
            transport.receive().await.unwrap();
        }
        assert!(transport.calls.live.is_empty());
        assert!(transport.calls.order.len() <= 2 * MAX_CALL_IDS);
    }

    #[tokio::test]
    async fn a_failed_reply_withdraws_those_still_waiting() {
        let (mut transport, tx, sent) = stalled(1);
        pings_then_an_answer(&tx, 3, 9);
        assert!(transport.receive().await.is_some());
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        assert_eq!(sent.lock().unwrap().len(), 3);
        // The first reply failed; the two others, which would wait for ever, were withdrawn.
        assert_eq!(transport.replies.available_permits(), MAX_REPLIES_IN_FLIGHT);
    }

    #[tokio::test]
    async fn once_a_reply_cannot_be_posted_no_more_are_tried() {
        let (mut transport, tx, sent) = stalled(usize::MAX);
        for round in 0..2 {
            pings_then_an_answer(&tx, 2, 50 + round);
            assert!(transport.receive().await.is_some());
            tokio::task::yield_now().await; // the reply tasks run: the first one fails
        }
        assert_eq!(
            sent.lock().unwrap().len(),
            2,
            "the two replies of the first round only"
        );
    }
}
