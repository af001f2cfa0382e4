//! The streamable-HTTP transport: URL rules, TLS, and headers on every request.
//!
//! `auth` is either a bearer token or a [`HeaderSource`] asked for headers before every HTTP
//! request (so a token can be refreshed between calls). An `httpx.Auth` object is not
//! accepted: its protocol is a generator that receives httpx `Request`/`Response` objects and
//! may resend requests, which only works when httpx itself performs the HTTP exchange; here the
//! exchange is made by reqwest in Rust, so there is no httpx request for it to act on.

use super::bounded::bounded_message;
use super::resumed_streams::ResumedStreams;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use std::sync::Arc;
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
        let loopback = crate::net::is_loopback(&parsed);
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

/// The transport's client: [`crate::net::http_client`] with no `User-Agent` of ours.
pub fn http_client() -> Result<reqwest::Client, String> {
    crate::net::http_client(crate::net::ClientOptions::default())
}

/// reqwest plus per-request headers from a [`HeaderSource`].
#[derive(Clone)]
pub struct HeaderClient {
    pub inner: reqwest::Client,
    pub source: Option<Arc<dyn HeaderSource>>,
    /// Which of our requests a stream rmcp resumes with `GET` answers.
    pub resumed: Arc<ResumedStreams>,
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

    /// The event stream answering our request `awaited` with its event ids noted, for a
    /// resumption of it (see [`ResumedStreams`]).
    fn noted(
        &self,
        awaited: Option<RequestId>,
        response: HttpResult<StreamableHttpPostResponse>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        match (response, awaited) {
            (Ok(StreamableHttpPostResponse::Sse(events, session)), Some(id)) => Ok(
                StreamableHttpPostResponse::Sse(self.resumed.noting(events, id), session),
            ),
            (response, _) => response,
        }
    }

    /// A stream opened with `GET`: bounded, and when it resumes the stream of our request
    /// `awaited`, answering that request as the stream of its POST would.
    fn resumed_events(
        &self,
        events: BoxedSseResponse,
        awaited: Option<RequestId>,
    ) -> BoxedSseResponse {
        let events = bounded_events(events, awaited.clone());
        match awaited {
            Some(id) => self.resumed.noting(events, id),
            None => events,
        }
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
            return self.noted(awaited.clone(), answered_here(awaited, response));
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
        self.noted(awaited.clone(), answered_here(awaited, response))
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
        let awaited = self.resumed.request_of(last_event_id.as_deref());
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, headers)
            .await
            .map(|events| self.resumed_events(events, awaited))
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
        let awaited = self.resumed.request_of(last_event_id.as_deref());
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
            .map(|events| self.resumed_events(events, awaited))
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
}
