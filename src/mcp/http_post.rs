//! Our own reading of the HTTP response to a `tools/list` or `tools/call` POST.
//!
//! rmcp's reqwest client parses a JSON body whole as soon as it has read it (up to 16 MiB), and
//! a parsed JSON value costs some 50 bytes: 6 MB of `[0,0,...]` in a listing took the client
//! to 250 MB, and a call's answer had to be capped at 2 MiB for the same reason. The answers
//! to these two requests, the only ones that carry the server's data in bulk, are read here
//! instead: a JSON body goes through [`bounded_message`] (values counted before anything is
//! parsed, lone surrogate escapes repaired) like every event of a stream, and a failed request
//! shows the start of the body the server sent with its status (rmcp kept only "HTTP 500").
//!
//! The answer to `initialize` is read here too: an `Mcp-Session-Id` that is not visible ASCII
//! is refused with a clear error (rmcp dropped it, and the session's requests went out
//! without one).
//!
//! Everything else (notifications, replies, the GET stream, `DELETE`) stays
//! with rmcp. What this returns is what rmcp's own client returns for the same response:
//! `202`/`204` is `Accepted`, `404` on a session is `SessionExpired` (rmcp then opens a new
//! session and posts again), a `401`/`403` challenge is `AuthRequired`/`InsufficientScope`,
//! a JSON-RPC error in a failed response's JSON body is that error, `429` keeps its
//! `Retry-After`; event streams are cut at an event over `max_sse_event_size`.

use super::bounded::bounded_message;
use reqwest::header::{
    HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE,
};
use reqwest::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

const SESSION_HEADER: &str = "mcp-session-id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";

/// Headers rmcp sets itself and refuses from callers (`MCP-Protocol-Version` excepted: its
/// worker sends that one through the custom headers).
const RESERVED: &[&str] = &["accept", SESSION_HEADER, "last-event-id"];

/// Posts `message` and reads the response as described in the module documentation.
pub(super) async fn post(
    client: &reqwest::Client,
    uri: Arc<str>,
    message: ClientJsonRpcMessage,
    session_id: Option<Arc<str>>,
    auth_token: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
    limits: StreamableHttpResponseLimits,
) -> HttpResult<StreamableHttpPostResponse> {
    let mut request = client
        .post(uri.as_ref())
        .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
    if let Some(token) = auth_token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        if RESERVED
            .iter()
            .any(|r| name.as_str().eq_ignore_ascii_case(r))
        {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        request = request.header(name, value);
    }
    let session_was_attached = session_id.is_some();
    if let Some(id) = session_id {
        request = request.header(SESSION_HEADER, id.as_ref());
    }
    let mut response = request
        .json(&message)
        .send()
        .await
        .map_err(StreamableHttpError::Client)?;
    let status = response.status();
    let header = |name: &HeaderName| {
        response
            .headers()
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    if let Some(challenge) = header(&WWW_AUTHENTICATE) {
        if status == StatusCode::UNAUTHORIZED {
            return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                challenge,
            )));
        }
        if status == StatusCode::FORBIDDEN {
            let scope = scope_of(&challenge);
            return Err(StreamableHttpError::InsufficientScope(
                InsufficientScopeError::new(challenge, scope),
            ));
        }
    }
    if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
        return Ok(StreamableHttpPostResponse::Accepted);
    }
    if status == StatusCode::NOT_FOUND && session_was_attached {
        return Err(StreamableHttpError::SessionExpired);
    }
    let content_type = header(&CONTENT_TYPE);
    let is = |mime: &str| {
        content_type
            .as_deref()
            .is_some_and(|ct| media_type_is(ct, mime))
    };
    let session = match response.headers().get(SESSION_HEADER) {
        None => None,
        Some(id) if id.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b)) => {
            Some(String::from_utf8_lossy(id.as_bytes()).into_owned())
        }
        // rmcp drops such an id, and the session's later requests went out without it.
        Some(_) => {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                Cow::Borrowed(
                    "the server's Mcp-Session-Id is not visible ASCII (0x21-0x7E), as the \
                 protocol requires; the session cannot be kept",
                ),
            ))
        }
    };
    if !status.is_success() {
        if status == StatusCode::TOO_MANY_REQUESTS {
            return Err(HttpStatusError::new(status.as_u16(), header(&RETRY_AFTER)).into());
        }
        let refused = |body: &[u8]| {
            Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                failure(status, body),
            )))
        };
        // A 401 or 403 without a challenge keeps its status (as with rmcp).
        let auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        if is(JSON) && !auth_failure {
            // Possibly a JSON-RPC error, read whole and counted like any answer (a server
            // chooses the status: a 500 is no safer than a 200); a body that stalls does not
            // hold the call longer than a diagnostic's would.
            let read = read_body(&mut response, limits.max_json_response_size);
            let body = match tokio::time::timeout(PREFIX_WAIT, read).await {
                Ok(Ok(body)) => body,
                Ok(Err(e)) => {
                    return refused(format!("(its body could not be read: {e})").as_bytes())
                }
                Err(_) => return refused(STALLED.as_bytes()),
            };
            let text = lossy(body);
            if super::bounded::over_value_budget(text.as_bytes()) {
                return refused(super::bounded::too_many_values().as_bytes());
            }
            let text = bounded_message(text);
            if let Ok(error @ ServerJsonRpcMessage::Error(_)) =
                serde_json::from_str::<ServerJsonRpcMessage>(&text)
            {
                return Ok(StreamableHttpPostResponse::Json(error, session));
            }
            return refused(text.as_bytes());
        }
        // Anything else is a diagnostic: its start, waited for a moment at most (rmcp did not
        // read a 5xx's body at all, so a body that stalls must not hold the call).
        return refused(&read_prefix(&mut response, limits.max_error_response_size).await);
    }
    if is(EVENT_STREAM) {
        let events = bounded_sse(response, limits.max_sse_event_size);
        return Ok(StreamableHttpPostResponse::Sse(events, session));
    }
    if !is(JSON) {
        return Err(StreamableHttpError::UnexpectedContentType(content_type));
    }
    let body = read_body(&mut response, limits.max_json_response_size).await?;
    let text = bounded_message(lossy(body));
    match serde_json::from_str::<ServerJsonRpcMessage>(&text) {
        Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
        Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!(
                "the server's JSON response is not a JSON-RPC message ({e}): {}",
                preview(text.as_bytes())
            ),
        ))),
    }
}

/// Bytes that are not UTF-8 become U+FFFD, as over stdio.
fn lossy(body: Vec<u8>) -> String {
    String::from_utf8(body).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// How much of a body an error shows (characters, after cleaning).
const PREVIEW_CHARS: usize = 500;

/// "HTTP 500 Internal Server Error: <the start of the body>".
fn failure(status: StatusCode, body: &[u8]) -> String {
    match preview(body) {
        p if p == EMPTY => format!("HTTP {status}"),
        p => format!("HTTP {status}: {p}"),
    }
}

const EMPTY: &str = "<empty>";

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

/// What a failed response whose JSON body did not arrive in time shows of it.
const STALLED: &str = "(its JSON body did not arrive within 1 s)";

/// How long the start of a failed response's body (or the whole of a JSON one) is waited for.
const PREFIX_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// At most the first `limit` bytes of the body, and only what came within [`PREFIX_WAIT`] (or
/// before the body broke off).
async fn read_prefix(response: &mut reqwest::Response, limit: usize) -> Vec<u8> {
    let mut prefix = Vec::new();
    let read = async {
        while prefix.len() < limit {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = limit - prefix.len();
                    prefix.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                Ok(None) | Err(_) => break,
            }
        }
    };
    let _ = tokio::time::timeout(PREFIX_WAIT, read).await;
    prefix
}

/// The whole body, refused past `limit` bytes (by its `Content-Length` before reading any).
async fn read_body(response: &mut reqwest::Response, limit: usize) -> HttpResult<Vec<u8>> {
    let too_large = || StreamableHttpError::ResponseBodyTooLarge { max_size: limit };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Whether a `Content-Type` value names `mime` (parameters such as `charset` ignored).
fn media_type_is(content_type: &str, mime: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(mime))
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

/// The response's event stream, ended with an error at an event of more than `max` bytes
/// (rmcp's own limiter is private; the error says what rmcp's says).
fn bounded_sse(response: reqwest::Response, max: usize) -> BoxedSseResponse {
    use futures::StreamExt;
    let mut size = EventSize::default();
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(std::io::Error::other)?;
        if !size.observe(&chunk, max) {
            return Err(std::io::Error::other(format!(
                "SSE event exceeded the maximum size of {max} bytes"
            )));
        }
        Ok(chunk)
    });
    // After the error nothing more is read.
    let bytes = bytes.scan(false, |ended, item| {
        let stop = *ended;
        *ended = item.is_err();
        std::future::ready((!stop).then_some(item))
    });
    sse_stream::SseStream::from_bytes_stream(bytes).boxed()
}

/// The size of the event being received: the bytes of its lines so far (line ends not
/// counted); an empty line ends the event. Lines end with `\n`, `\r` or `\r\n`. A comment
/// line (it starts with `:`) counts while it arrives, since the parser holds it until it
/// ends, and is taken off once it has ended (the parser keeps none), as with rmcp's limiter.
#[derive(Default)]
struct EventSize {
    event: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventSize {
    /// Takes the next chunk of the stream; false once an event is over `max` bytes.
    fn observe(&mut self, chunk: &[u8], max: usize) -> bool {
        let mut rest = chunk;
        loop {
            let Some(at) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.grow(rest);
                return self.event <= max;
            };
            self.grow(&rest[..at]);
            if self.event > max {
                return false;
            }
            let end = rest[at];
            if !(end == b'\n' && self.after_cr && at == 0) {
                // A line ended (the `\n` of a `\r\n` was counted with its `\r`).
                if self.comment {
                    self.event -= self.line;
                }
                if self.line == 0 {
                    self.event = 0;
                }
                self.line = 0;
                self.comment = false;
            }
            self.after_cr = end == b'\r';
            rest = &rest[at + 1..];
        }
    }

    /// More of the current line.
    fn grow(&mut self, bytes: &[u8]) {
        let Some(&first) = bytes.first() else {
            return;
        };
        self.after_cr = false;
        if self.line == 0 {
            self.comment = first == b':';
        }
        self.line += bytes.len();
        self.event += bytes.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_measured_up_to_its_empty_line_whatever_the_line_ends() {
        for end in ["\n", "\r", "\r\n"] {
            let mut size = EventSize::default();
            let event = format!("data: 12345{end}data: 678{end}{end}");
            assert!(size.observe(event.as_bytes(), 20), "{end:?}");
            assert_eq!(size.event, 0, "{end:?}: the empty line ends the event");
            assert!(!size.observe(b"data: 123456789012345", 20), "{end:?}");
        }
        // Split anywhere, even between the \r and \n of one line end.
        let mut size = EventSize::default();
        for piece in ["data: 1234", "5\r", "\ndata", ": 678\r", "\n", "\r", "\n"] {
            assert!(size.observe(piece.as_bytes(), 20));
        }
        assert_eq!((size.event, size.line), (0, 0));
        assert!(size.observe(b"data: 12345678901234", 20));
        assert!(!size.observe(b"5", 20));
        // Comment lines (keep-alives) are not part of any event once they end, however many;
        // one still arriving counts, since the parser holds it.
        let mut size = EventSize::default();
        let comments = format!(
            ":{}\n:{}\r\ndata: 1234567890\n",
            "p".repeat(15),
            "q".repeat(15)
        );
        assert!(size.observe(comments.as_bytes(), 20));
        assert!(size.observe(b":", 20) && size.observe(b"xx\n", 20));
        assert_eq!(size.event, 16);
        let mut size = EventSize::default();
        assert!(size.observe(b":0123456789", 20));
        assert!(
            !size.observe(b"0123456789", 20),
            "a comment line of 21 bytes still arriving"
        );
        // A line starting with ':' later in a line is no comment.
        let mut size = EventSize::default();
        assert!(!size.observe(b"data: 12345678901234:5678", 20));
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
        assert!(media_type_is("Application/JSON; charset=utf-8", JSON));
        assert!(!media_type_is("application/jsonl", JSON));
    }
}
