//! The HTTP client given to rmcp's streamable HTTP transport: our implementation of rmcp's
//! `StreamableHttpClient` trait, rmcp's extension point for HTTP.
//!
//! It speaks HTTP, not JSON-RPC: rmcp's worker owns sessions, request ids, retries,
//! reconnection and the handshake, and gets rmcp's own types from here, each status mapped as
//! rmcp's reqwest client maps it (a `401`/`403` challenge, `202`/`204` accepted, `404` on a
//! session expired, `429` with its `Retry-After`, a JSON-RPC error in a failed JSON body, a
//! success other than an event stream to a notification or reply, which awaits nothing,
//! accepted unread). Every POST takes one path; `GET` and `DELETE` are rmcp's reqwest
//! client's with our headers, their events bounded as below. (rmcp's `server/discover`
//! fallback is not carried: the client starts with `initialize`.)
//!
//! What this adds to rmcp's reqwest client, and why (with its test in `tests/test_mcp*.py`):
//! - Headers from a [`HeaderSource`] on every request, so a token can be refreshed
//!   (`test_http_auth_callable_is_asked_per_request`).
//! - Each message held to [`MAX_ANSWER_VALUES`] and its lone surrogate escapes repaired
//!   ([`bounded_message`]) before rmcp parses it, in a JSON body (failed or not) and in every
//!   event: rmcp parsed a body whole, and 6 MB of `[0,0,...]` cost 250 MB
//!   (`test_an_http_answer_of_millions_of_tiny_values_is_not_parsed_into_memory`).
//! - An `Mcp-Session-Id` that is not visible ASCII refused saying so: rmcp dropped it, and
//!   later requests went out without one
//!   (`test_a_session_id_that_is_not_visible_ascii_is_refused_saying_so`).
//! - A failed response's body read for 1 s at most (a JSON one whole, others their
//!   start) and shown cleaned with the status: rmcp waited on a stalling JSON body until the
//!   call's timeout, and showed a 5xx as its status alone
//!   (`test_a_failed_json_body_that_stalls_does_not_hold_the_call`,
//!   `test_http_answers_in_one_json_body_are_read_like_events`).
//! - A request answered in its own response, or failed at once: rmcp left a call answered with
//!   a `202`, or with a JSON body for another id, waiting until its timeout (for ever with
//!   `timeout=None`); an error without an id is the request's
//!   (`test_an_http_response_without_the_answer_fails_the_call_at_once`).
//! - An answer in an event that rmcp cannot read (truncated, too deep, an error of the wrong
//!   shape) failing the request it names at once, as over stdio ([`super::http_events`]):
//!   rmcp skipped the event, and the call waited while the server held the stream open
//!   (`test_an_http_event_answering_a_call_that_cannot_be_read_fails_it_at_once`).
//! - An event over the size limit (measured by [`crate::sse::bounded`]: rmcp's limiter is
//!   private) fails the request its stream answers saying so, also on a stream rmcp resumed
//!   with `GET` ([`ResumedStreams`]): rmcp read it as a closed connection
//!   (`test_an_http_event_too_large_to_read_fails_its_call_saying_so`,
//!   `test_an_event_too_large_on_a_resumed_stream_fails_its_call_saying_so`).
//!
//! [`MAX_ANSWER_VALUES`]: super::bounded::MAX_ANSWER_VALUES

use super::bounded::{bounded_message, lossy, over_value_budget, too_many_values};
use super::http::{parse_headers, HeaderSource, Headers};
use super::http_events::{bounded_events, bounded_sse};
use super::resumed_streams::ResumedStreams;
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE as EVENT_STREAM, HEADER_SESSION_ID, JSON_MIME_TYPE as JSON,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse as Response, StreamableHttpResponseLimits,
};
use std::borrow::Cow;
use std::sync::Arc;

type HttpError = StreamableHttpError<reqwest::Error>;
type HttpResult<T> = Result<T, HttpError>;

/// How long the body of a failed response is waited for (its start, or a JSON one whole).
const BODY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How much of a body an error shows (characters, after cleaning).
const PREVIEW_CHARS: usize = 500;
const EMPTY: &str = "<empty>";

/// reqwest with per-request headers, reading responses within the bounds above.
#[derive(Clone)]
pub struct BoundedHttpClient {
    pub inner: reqwest::Client,
    pub source: Option<Arc<dyn HeaderSource>>,
    /// Which of our requests a stream rmcp resumes with `GET` answers.
    pub resumed: Arc<ResumedStreams>,
}

impl BoundedHttpClient {
    /// `headers` with those of the [`HeaderSource`] added.
    async fn merged(&self, mut headers: Headers) -> HttpResult<Headers> {
        let Some(source) = self.source.clone() else {
            return Ok(headers);
        };
        let io = |e: String| HttpError::Io(std::io::Error::other(e));
        let pairs = tokio::task::spawn_blocking(move || source.headers())
            .await?
            .map_err(|e| io(format!("auth callable failed: {e}")))?;
        let extra = parse_headers(&pairs).map_err(|e| io(format!("auth callable returned {e}")))?;
        headers.extend(extra);
        Ok(headers)
    }

    /// A request's answer must be in the response to its POST (see the module documentation);
    /// an event stream is bounded, and noted when it answers our request.
    fn answered_here(
        &self,
        awaited: Option<RequestId>,
        response: HttpResult<Response>,
    ) -> HttpResult<Response> {
        use JsonRpcMessage::{Error, Response as Answer};
        match (response?, awaited) {
            (Response::Sse(events, session), awaited) => {
                Ok(Response::Sse(self.events(events, awaited), session))
            }
            (Response::Accepted, Some(id)) => unexpected(format!(
                "the server accepted request {id} without answering it (HTTP 202 or 204)"
            )),
            // An error without an id (`"id": null`, for a request the server could not read)
            // in the response to our request is its answer.
            (Response::Json(Error(mut error), session), Some(id))
                if error.id.as_ref().is_none_or(|of| *of == id) =>
            {
                error.id = Some(id);
                Ok(Response::Json(Error(error), session))
            }
            (Response::Json(Error(error), _), Some(id)) => unexpected(format!(
                "the server answered request {id} with an error for another request: {}",
                super::sanitize::sanitize_marked(&error.error.message, 200)
            )),
            (Response::Json(Answer(answer), session), Some(id)) if answer.id == id => {
                Ok(Response::Json(Answer(answer), session))
            }
            (Response::Json(..), Some(id)) => unexpected(format!(
                "the server's JSON response to request {id} is not its answer"
            )),
            (response, _) => Ok(response),
        }
    }

    /// An event stream, bounded, and noted when it answers our request `awaited`.
    fn events(&self, events: BoxedSseResponse, awaited: Option<RequestId>) -> BoxedSseResponse {
        let events = bounded_events(events, awaited.clone());
        self.resumed.noting(events, awaited)
    }
}

/// rmcp's worker calls the variants of these methods that take the transport's limits, which
/// default to these: its limits are rmcp's defaults (16 MiB per event and per JSON body, 64 KiB
/// of a diagnostic), which this client applies itself.
impl StreamableHttpClient for BoundedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> HttpResult<Response> {
        let accept = format!("{EVENT_STREAM}, {JSON}");
        let mut request = self.inner.post(uri.as_ref()).header(ACCEPT, accept);
        if let Some(token) = auth {
            request = request.bearer_auth(token);
        }
        for (name, value) in self.merged(headers).await? {
            // Those rmcp sets itself (it sends `MCP-Protocol-Version` through these).
            if ["accept", "mcp-session-id", "last-event-id"].contains(&name.as_str()) {
                return Err(HttpError::ReservedHeaderConflict(name.to_string()));
            }
            request = request.header(name, value);
        }
        let session_was_attached = session.is_some();
        if let Some(id) = session {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        let awaited = match &message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let response = request.json(&message).send().await?;
        let response = read_response(response, awaited.is_some(), session_was_attached).await;
        self.answered_here(awaited, response)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> HttpResult<()> {
        let headers = self.merged(headers).await?;
        self.inner.delete_session(uri, session, auth, headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
    ) -> HttpResult<BoxedSseResponse> {
        let headers = self.merged(headers).await?;
        let awaited = self.resumed.request_of(last_event_id.as_deref());
        let events = self
            .inner
            .get_stream(uri, session, last_event_id, auth, headers);
        Ok(self.events(events.await?, awaited))
    }
}

/// The response to a POST, mapped as the module documentation says (a message that is no
/// request awaits no answer).
async fn read_response(
    response: reqwest::Response,
    awaits_answer: bool,
    session_was_attached: bool,
) -> HttpResult<Response> {
    let limits = StreamableHttpResponseLimits::default();
    let (status, headers) = (response.status(), response.headers());
    let header =
        |name: &str| Some(String::from_utf8_lossy(headers.get(name)?.as_bytes()).into_owned());
    match (status, header("www-authenticate")) {
        (StatusCode::UNAUTHORIZED, Some(challenge)) => {
            return Err(HttpError::AuthRequired(AuthRequiredError::new(challenge)))
        }
        (StatusCode::FORBIDDEN, Some(challenge)) => {
            let scope = scope_of(&challenge);
            let error = InsufficientScopeError::new(challenge, scope);
            return Err(HttpError::InsufficientScope(error));
        }
        (StatusCode::ACCEPTED | StatusCode::NO_CONTENT, _) => return Ok(Response::Accepted),
        (StatusCode::NOT_FOUND, _) if session_was_attached => {
            return Err(HttpError::SessionExpired)
        }
        _ => {}
    }
    let session = match header(HEADER_SESSION_ID) {
        Some(id) if !id.bytes().all(|b| b.is_ascii_graphic()) => {
            return unexpected(
                "the server's Mcp-Session-Id is not visible ASCII (0x21-0x7E), as the \
                 protocol requires; the session cannot be kept",
            )
        }
        session => session,
    };
    if status == StatusCode::TOO_MANY_REQUESTS {
        // Kept only when it is UTF-8 (and at most 128 bytes, which `new` sees to), as rmcp does.
        let retry_after = headers
            .get(RETRY_AFTER)
            .map(|v| std::str::from_utf8(v.as_bytes()));
        let retry_after = retry_after.and_then(Result::ok).map(str::to_owned);
        return Err(HttpStatusError::new(429, retry_after).into());
    }
    let content_type = header(CONTENT_TYPE.as_str());
    let is = |mime| media_type_is(content_type.as_deref(), mime);
    // A 401 or 403 without a challenge keeps its status (as with rmcp).
    let json = is(JSON) && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    if !status.is_success() {
        return failed(response, json, session, limits).await;
    }
    if is(EVENT_STREAM) {
        let events = bounded_sse(response, limits.max_sse_event_size);
        return Ok(Response::Sse(events, session));
    }
    if !awaits_answer {
        // Some servers answer a notification with 200 and an empty or odd body: it answers
        // nothing, and is not read.
        return Ok(Response::Accepted);
    }
    if !json {
        return Err(HttpError::UnexpectedContentType(content_type));
    }
    let mut body = Vec::new();
    read_body(response, &mut body, limits.max_json_response_size, false).await?;
    let text = bounded_message(lossy(body));
    serde_json::from_str(&text)
        .map(|message| Response::Json(message, session))
        .or_else(|e| {
            let shown = preview(text.as_bytes());
            unexpected(format!(
                "the server's JSON response is not a JSON-RPC message ({e}): {shown}"
            ))
        })
}

/// A failed response: a JSON-RPC error in its JSON body is that error (the body read whole
/// and counted like any answer: a server chooses its status, a 500 is no safer than a 200);
/// else an error showing the status and the start of the body, read for [`BODY_WAIT`] at most.
async fn failed(
    response: reqwest::Response,
    json: bool,
    session: Option<String>,
    limits: StreamableHttpResponseLimits,
) -> HttpResult<Response> {
    let status = response.status();
    let limit = match json {
        true => limits.max_json_response_size,
        false => limits.max_error_response_size,
    };
    let mut body = Vec::new();
    let read = tokio::time::timeout(BODY_WAIT, read_body(response, &mut body, limit, !json)).await;
    let refused = |shown: &[u8]| unexpected(failure(status, shown));
    if !json {
        return refused(&body);
    }
    let text = match read {
        Ok(Ok(())) => lossy(body),
        Ok(Err(e)) => return refused(format!("(its body could not be read: {e})").as_bytes()),
        Err(_) => return refused(b"(its JSON body did not arrive within 1 s)"),
    };
    if over_value_budget(text.as_bytes()) {
        return refused(too_many_values().as_bytes());
    }
    let text = bounded_message(text);
    match serde_json::from_str::<ServerJsonRpcMessage>(&text) {
        Ok(error @ JsonRpcMessage::Error(_)) => Ok(Response::Json(error, session)),
        _ => refused(text.as_bytes()),
    }
}

/// Reads the body into `body`, at most `limit` bytes: past them the rest is left unread when
/// `cut`, else the body is refused (by its `Content-Length` before any is read).
async fn read_body(
    mut response: reqwest::Response,
    body: &mut Vec<u8>,
    limit: usize,
    cut: bool,
) -> HttpResult<()> {
    let too_large = || HttpError::ResponseBodyTooLarge { max_size: limit };
    if !cut && response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    while body.len() < limit || !cut {
        let Some(chunk) = response.chunk().await? else {
            break;
        };
        let room = limit - body.len();
        if chunk.len() > room && !cut {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(())
}

/// rmcp's error for a response the protocol does not allow.
fn unexpected<T>(why: impl Into<Cow<'static, str>>) -> HttpResult<T> {
    Err(HttpError::UnexpectedServerResponse(why.into()))
}

/// "HTTP 500 Internal Server Error: <the start of the body>".
fn failure(status: StatusCode, body: &[u8]) -> String {
    match preview(body) {
        p if p == EMPTY => format!("HTTP {status}"),
        p => format!("HTTP {status}: {p}"),
    }
}

/// The start of a body, cleaned like any text from the server, blank and control characters
/// at its ends left out; `<empty>` for none. Only the first 64 KiB are looked at.
fn preview(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let blank = |c: char| c.is_whitespace() || c.is_control();
    let text = super::sanitize::sanitize_marked(text.trim_matches(blank), PREVIEW_CHARS);
    match text.trim_matches(blank) {
        "" => EMPTY.to_owned(),
        trimmed => trimmed.to_owned(),
    }
}

/// Whether a `Content-Type` value names `mime` (parameters such as `charset` ignored).
fn media_type_is(content_type: Option<&str>, mime: &str) -> bool {
    let essence = content_type.and_then(|ct| ct.split(';').next());
    essence.is_some_and(|essence| essence.trim().eq_ignore_ascii_case(mime))
}

/// The `scope` parameter of a `WWW-Authenticate` challenge, quoted or not.
fn scope_of(challenge: &str) -> Option<String> {
    let at = challenge.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let rest = &challenge[at..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    Some(value.to_owned()).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// What `post_message` makes of `response`, sent by a server on 127.0.0.1 once it has read
    /// the whole POST of `message` (with the session id `session`, if any).
    async fn posted(
        message: &str,
        session: Option<&str>,
        response: impl AsRef<[u8]>,
    ) -> HttpResult<Response> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/mcp", listener.local_addr().unwrap());
        let response = response.as_ref().to_vec();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut chunk = [0; 4096];
            loop {
                let n = socket.read(&mut chunk).await.unwrap();
                request.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
                let length = text.split("content-length: ").nth(1).and_then(|rest| {
                    rest.split("\r\n")
                        .next()
                        .and_then(|n| n.parse::<usize>().ok())
                });
                let end = text
                    .find("\r\n\r\n")
                    .map(|end| end + 4 + length.unwrap_or(0));
                if n == 0 || end.is_some_and(|end| request.len() >= end) {
                    break;
                }
            }
            socket.write_all(&response).await.unwrap();
            socket.shutdown().await.unwrap();
        });
        let client = BoundedHttpClient {
            inner: crate::net::http_client(Default::default()).unwrap(),
            source: None,
            resumed: Default::default(),
        };
        let message = serde_json::from_str(message).unwrap();
        let session = session.map(Arc::from);
        client
            .post_message(uri.into(), message, session, None, Headers::new())
            .await
    }

    /// Each status is what rmcp's own reqwest client makes of it, on the one path every POST
    /// takes, with the bounds of ours (the session id, the request's own answer).
    #[tokio::test]
    async fn every_post_is_mapped_as_rmcps_client_maps_it() {
        let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let reply = |head: &str, body: &str| {
            format!(
                "HTTP/1.1 {head}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        let html = reply("200 OK\r\nContent-Type: text/html", "<p>hi</p>");
        // A notification awaits nothing: an odd success accepts it; a request needs its answer.
        assert!(matches!(
            posted(note, None, &html).await,
            Ok(Response::Accepted)
        ));
        assert!(matches!(
            posted(ping, None, &html).await,
            Err(HttpError::UnexpectedContentType(Some(t))) if t == "text/html"
        ));
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        let json = |more: &str| {
            reply(
                &format!("200 OK\r\nContent-Type: application/json{more}"),
                answer,
            )
        };
        match posted(ping, None, &json("\r\nMcp-Session-Id: s-1")).await {
            Ok(Response::Json(JsonRpcMessage::Response(r), Some(s))) => {
                assert_eq!((r.id, s.as_str()), (RequestId::Number(7), "s-1"))
            }
            other => panic!("{other:?}"),
        }
        let refused = posted(ping, None, &json("\r\nMcp-Session-Id: s 1")).await;
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("Mcp-Session-Id is not visible ASCII"));
        let accepted = reply("202 Accepted", "");
        let why = posted(ping, None, &accepted).await.unwrap_err().to_string();
        assert!(
            why.contains("accepted request 7 without answering it"),
            "{why}"
        );
        assert!(matches!(
            posted(note, None, &accepted).await,
            Ok(Response::Accepted)
        ));
        // A session the server no longer knows, a rate limit, an authorization challenge.
        let gone = reply("404 Not Found", "");
        assert!(matches!(
            posted(ping, Some("s-1"), &gone).await,
            Err(HttpError::SessionExpired)
        ));
        let limited = reply("429 Too Many Requests\r\nRetry-After: 7", "");
        match posted(ping, None, &limited).await {
            Err(HttpError::HttpStatus(e)) => {
                assert_eq!((e.status, e.retry_after.as_deref()), (429, Some("7")))
            }
            other => panic!("{other:?}"),
        }
        // A Retry-After that is not UTF-8 is left out, as rmcp leaves it out.
        let garbled = [
            &b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: \xff7"[..],
            b"\r\nContent-Length: 0\r\n\r\n",
        ]
        .concat();
        match posted(ping, None, garbled).await {
            Err(HttpError::HttpStatus(e)) => assert_eq!((e.status, e.retry_after), (429, None)),
            other => panic!("{other:?}"),
        }
        let challenge = "\r\nWWW-Authenticate: Bearer scope=\"files:read\"";
        let denied = posted(
            ping,
            None,
            &reply(&format!("401 Unauthorized{challenge}"), ""),
        )
        .await;
        assert!(matches!(denied, Err(HttpError::AuthRequired(_))));
        match posted(ping, None, &reply(&format!("403 Forbidden{challenge}"), "")).await {
            Err(HttpError::InsufficientScope(e)) => {
                assert_eq!(e.required_scope.as_deref(), Some("files:read"))
            }
            other => panic!("{other:?}"),
        }
        // An id-less JSON-RPC error in a failed response is the request's.
        let down = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"down"}}"#;
        let failed = reply(
            "500 Internal Server Error\r\nContent-Type: application/json",
            down,
        );
        match posted(ping, None, &failed).await {
            Ok(Response::Json(JsonRpcMessage::Error(e), None)) => {
                assert_eq!(
                    (e.id, e.error.message.as_ref()),
                    (Some(RequestId::Number(7)), "down")
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failures_show_their_status_and_the_start_of_the_body() {
        let status = StatusCode::INTERNAL_SERVER_ERROR;
        assert_eq!(
            failure(status, b"upstream timed out\x1b[2J\n"),
            "HTTP 500 Internal Server Error: upstream timed out[2J"
        );
        assert_eq!(failure(status, b" \n"), "HTTP 500 Internal Server Error");
        assert_eq!(preview(b""), "<empty>");
        // Cut to 500 characters (cleaned), whatever the body's size; bytes that are not UTF-8
        // shown as U+FFFD.
        let long = failure(status, "é".repeat(100_000).as_bytes());
        assert!(long.ends_with("…(truncated)"), "{long}");
        assert_eq!(long.chars().filter(|&c| c == 'é').count(), 500);
        assert_eq!(preview(b"a\xffb"), "a\u{fffd}b");
        // What the server meant may come after a run of blanks, and blanks may be all it sent.
        let late = [vec![b' '; 2500], b"\0\0real reason\n\0".to_vec()].concat();
        assert_eq!(preview(&late), "real reason");
        assert_eq!(preview(b"\0\n\0"), "<empty>");
    }

    #[test]
    fn the_scope_of_a_challenge() {
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read files:write""#)
                .as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(
            scope_of("Bearer scope=read:data, x=1").as_deref(),
            Some("read:data")
        );
        assert_eq!(scope_of("Bearer realm=x"), None);
        assert!(media_type_is(Some("Application/JSON; charset=utf-8"), JSON));
        assert!(!media_type_is(Some("application/jsonl"), JSON));
    }
}
