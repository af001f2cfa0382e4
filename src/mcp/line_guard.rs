//! The reader of a stdio server's output: complete, bounded JSON lines, read as rmcp messages.
//!
//! rmcp's own line reader drops a line over its size limit and a line it cannot read, so the
//! request such a line answers waited for its timeout (for ever with none), and serde_json
//! stops at 128 levels of nesting. [`LineGuard`] reads the child's stdout for
//! [`LineTransport`](super::stdio_transport::LineTransport) in one pass over each byte, which
//! also notes the line's top-level `id` and whether it has a `method` (a request or
//! notification of the server's), in any key order:
//!
//! - A line over [`MAX_MESSAGE_BYTES`] or nesting deeper than [`MAX_MESSAGE_DEPTH`] is
//!   discarded as it comes. If it answers a request, that request gets an error saying why:
//!   at once when its id and its `result` or `error` key came first, else at the line's end.
//! - Every other line is cut to what a message may hold
//!   ([`bounded_message`](super::bounded::bounded_message)) before it is parsed. An answer that
//!   cannot be read (truncated JSON, an error of the wrong shape, neither a result nor an
//!   error) fails its request at once with the reason. Anything else that cannot be read
//!   (noise, a malformed request of the server's) is dropped without a reply: replying to
//!   garbage invites a storm of it.
//! - Ids are read leniently: rmcp numbers its requests with integers and matches ids exactly,
//!   so an answer whose id is such a number written as a string (`"7"`, escaped or not) or
//!   with a fraction (`7.0`) is read as that number (the call would otherwise wait for its
//!   timeout).

use super::bounded::{
    bounded_message, error_answer, is_string_or_number, lossy, Envelope, MAX_SERVER_ID_BYTES,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage};
use std::borrow::Cow;
use std::collections::VecDeque;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Largest accepted message (one line), as rmcp's own default and its HTTP client's.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Deepest accepted nesting in one message; serde_json refuses beyond 128.
pub const MAX_MESSAGE_DEPTH: usize = 100;

type Message = RxJsonRpcMessage<RoleClient>;

/// The server's output as messages, only from complete lines within the bounds.
pub struct LineGuard<R> {
    inner: R,
    chunk: Box<[u8]>,
    /// The line being read, while it is within the bounds.
    line: Vec<u8>,
    scan: Scan,
    /// Why the line being read is discarded, once it is over a bound.
    discarding: Option<String>,
    ready: VecDeque<Message>,
    eof: bool,
    max_line: usize,
}

impl<R: AsyncRead + Unpin> LineGuard<R> {
    /// `max_line`: [`MAX_MESSAGE_BYTES`] but in tests.
    pub fn new(inner: R, max_line: usize) -> Self {
        LineGuard {
            inner,
            chunk: vec![0u8; 64 * 1024].into_boxed_slice(),
            line: Vec::new(),
            scan: Scan::default(),
            discarding: None,
            ready: VecDeque::new(),
            eof: false,
            max_line,
        }
    }

    /// The next message; `None` once the output ended (a line it ends inside is dropped).
    /// Cancel-safe, as rmcp needs (it polls this in a `select!`): a read that is cancelled
    /// reads nothing, and what was read is kept in `self`.
    pub async fn next(&mut self) -> Option<Message> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            if self.eof {
                return None;
            }
            match self.inner.read(&mut self.chunk).await {
                Ok(0) | Err(_) => self.eof = true,
                Ok(n) => {
                    let chunk = std::mem::take(&mut self.chunk);
                    for piece in chunk[..n].split_inclusive(|&b| b == b'\n') {
                        let line = piece.strip_suffix(b"\n");
                        self.take(line.unwrap_or(piece));
                        if line.is_some() {
                            self.end_line();
                        }
                    }
                    self.chunk = chunk;
                }
            }
        }
    }

    /// Part of a line: scanned, and kept while the line is within the bounds.
    fn take(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.scan.feed(b);
            if self.scan.depth > MAX_MESSAGE_DEPTH && self.discarding.is_none() {
                self.discard(too_deep());
            }
        }
        if self.discarding.is_none() && self.line.len() + bytes.len() > self.max_line {
            let max = self.max_line;
            self.discard(format!(
                "the server's message was larger than {max} bytes and was discarded"
            ));
        } else if self.discarding.is_none() {
            self.line.extend_from_slice(bytes);
        }
    }

    fn discard(&mut self, reason: String) {
        self.line = Vec::new();
        self.discarding = Some(reason);
        if self.scan.answer {
            self.refuse();
        }
    }

    /// The error owed to the discarded line's request, once its id is known (and once).
    fn refuse(&mut self) {
        if let (Some((_, id)), Some(reason)) = (self.scan.answer_id(), &self.discarding) {
            self.ready.extend(refusal(id, reason));
            self.scan.id = None;
        }
    }

    fn end_line(&mut self) {
        if self.discarding.is_some() {
            self.refuse();
        } else {
            self.ready.extend(decode(&self.line, &self.scan));
        }
        self.line.clear();
        self.scan = Scan::default();
        self.discarding = None;
    }
}

fn too_deep() -> String {
    format!("the server's message nested deeper than {MAX_MESSAGE_DEPTH} levels and was discarded")
}

/// One whole message read as [`LineGuard`] reads a line (what an HTTP event stream falls back
/// on for an event rmcp could not read, see [`super::http_events`]): an answer naming a request
/// that cannot be read, or nests deeper than [`MAX_MESSAGE_DEPTH`], becomes that request's
/// error answer; `None` for what names no request.
pub(super) fn read_whole(text: &[u8]) -> Option<Message> {
    let mut scan = Scan::default();
    let mut deepest = 0;
    for &b in text {
        scan.feed(b);
        deepest = deepest.max(scan.depth);
    }
    if deepest > MAX_MESSAGE_DEPTH {
        return refusal(scan.answer_id()?.1, &too_deep());
    }
    decode(text, &scan)
}

/// A complete line within the bounds, as rmcp's message; `None` to drop it.
fn decode(line: &[u8], scan: &Scan) -> Option<Message> {
    // A byte-order mark some servers print before their first line (after blanks or not)
    // reads as blanks, so the offsets the scan noted stay right; rmcp dropped such a line,
    // and its answer with it.
    let mut line = line.to_vec();
    let blanks = line.iter().take_while(|b| b.is_ascii_whitespace()).count();
    if line[blanks..].starts_with("\u{feff}".as_bytes()) {
        line[blanks..blanks + 3].copy_from_slice(b"   ");
    }
    // serde reads a struct from a JSON array too (fields by position): only objects here.
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let id = scan.answer_id();
    if let Some((at, raw, n)) = id.and_then(|(at, raw)| Some((at, raw, request_number(raw)?))) {
        line.splice(at..at + raw.len(), n.to_string().into_bytes());
    }
    // A line that is not UTF-8 could not be read at all (rmcp drops it): such bytes become
    // U+FFFD.
    let text = bounded_message(lossy(line));
    let error = match serde_json::from_str::<Message>(&text) {
        Ok(message) => return Some(message),
        Err(e) => e,
    };
    let reason = match serde_json::from_str::<Envelope<'_>>(&text) {
        // Not JSON, but it names one of our requests (a truncated or garbled answer).
        Err(_) => format!("the server's answer is not valid JSON: {error}"),
        Ok(env) => match (env.result, env.error) {
            (None, None) => "the server's answer has neither a result nor an error".into(),
            (_, Some(err)) => format!("malformed error answer: {}", err.get()),
            _ => format!("the server's answer is not a valid JSON-RPC response: {error}"),
        },
    };
    refusal(id?.1, &reason)
}

/// The error answer, worded `reason`, to the request an answer's id (its JSON text) names: the
/// number it stands for ([`request_number`]), else the id as it is.
fn refusal(id: &str, reason: &str) -> Option<Message> {
    let number = request_number(id).map(|n| n.to_string());
    let error = error_answer(number.as_deref().unwrap_or(id), -32603, reason);
    serde_json::from_str(&error).ok()
}

/// The request number an id of another type stands for (`"7"`, `"\u0037"` or `7.0` for 7);
/// `None` for an integer (nothing to change) or anything else.
fn request_number(raw: &str) -> Option<u64> {
    match raw.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(s) => {
            let s: Cow<'_, str> = if s.contains('\\') {
                serde_json::from_str::<String>(raw).ok()?.into()
            } else {
                s.into()
            };
            let digits = !s.is_empty() && s.len() <= 18 && s.bytes().all(|b| b.is_ascii_digit());
            if digits {
                s.parse().ok()
            } else {
                None
            }
        }
        None if raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') => None,
        None => {
            let n: f64 = raw.parse().ok()?;
            (n.fract() == 0.0 && (0.0..9e15).contains(&n)).then_some(n as u64)
        }
    }
}

/// What one pass over a line's bytes learns: its nesting depth, and its top-level `id` (raw
/// JSON text and where it starts in the line), whether it has a `method`, and whether it has a
/// `result` or `error` (an answer). A top-level string or number longer than an id may be is
/// not kept.
#[derive(Default)]
struct Scan {
    /// Bytes of the line seen so far.
    pos: usize,
    depth: usize,
    in_string: bool,
    escape: bool,
    /// The top-level string or number being read, and where it began.
    token: Option<(usize, Vec<u8>)>,
    /// The top-level token read last, the key of what follows once a `:` comes.
    last: Option<Vec<u8>>,
    /// The key whose value is being read.
    key: Option<Vec<u8>>,
    id: Option<(usize, Vec<u8>)>,
    method: bool,
    answer: bool,
}

impl Scan {
    #[inline]
    fn feed(&mut self, b: u8) {
        let top = self.depth == 1;
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            if top {
                self.push(b);
                if !self.in_string {
                    self.end_token();
                }
            }
        } else {
            match b {
                b'"' => {
                    self.in_string = true;
                    if top {
                        self.token = Some((self.pos, vec![b]));
                    }
                }
                b'{' | b'[' => {
                    if top {
                        self.end_token();
                        self.member(None); // a nested value: no id
                    }
                    self.depth += 1;
                }
                b'}' | b']' => {
                    if top {
                        self.end_token();
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                _ if !top => {}
                b':' => {
                    self.end_token();
                    self.key = self.last.take();
                    match self.key.as_deref() {
                        Some(br#""method""#) => self.method = true,
                        Some(br#""result""#) | Some(br#""error""#) => self.answer = true,
                        _ => {}
                    }
                }
                b',' => self.end_token(),
                _ if b.is_ascii_whitespace() => self.end_token(),
                _ if self.token.is_some() => self.push(b),
                _ => self.token = Some((self.pos, vec![b])),
            }
        }
        self.pos += 1;
    }

    fn push(&mut self, b: u8) {
        if let Some((_, text)) = &mut self.token {
            if text.len() <= MAX_SERVER_ID_BYTES {
                text.push(b);
            }
        }
    }

    fn end_token(&mut self) {
        let Some(token) = self.token.take() else {
            return;
        };
        let token = Some(token).filter(|(_, text)| text.len() <= MAX_SERVER_ID_BYTES);
        if self.key.is_some() {
            self.member(token);
        } else {
            self.last = token.map(|(_, text)| text);
        }
    }

    /// The value of the current key was read: `value` is its text, `None` when nested.
    fn member(&mut self, value: Option<(usize, Vec<u8>)>) {
        if self.key.take().as_deref() == Some(br#""id""#) {
            self.id = value;
        }
    }

    /// The id of a line that is no request or notification: where it starts, and its text.
    fn answer_id(&self) -> Option<(usize, &str)> {
        let (at, raw) = self.id.as_ref().filter(|_| !self.method)?;
        let raw = std::str::from_utf8(raw)
            .ok()
            .filter(|r| is_string_or_number(r))?;
        Some((*at, raw))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    async fn read(input: &[u8], limit: usize) -> Vec<Value> {
        let mut guard = LineGuard::new(input, limit);
        let mut out = Vec::new();
        while let Some(message) = guard.next().await {
            out.push(serde_json::to_value(message).unwrap());
        }
        out
    }

    /// `lines`, each ended by a newline, read with the default bounds.
    async fn read_lines(lines: &[&str]) -> Vec<Value> {
        read(
            format!("{}\n", lines.join("\n")).as_bytes(),
            MAX_MESSAGE_BYTES,
        )
        .await
    }

    fn error(message: &Value) -> (&Value, &str) {
        (
            &message["id"],
            message["error"]["message"].as_str().unwrap(),
        )
    }

    const OK: &str = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;

    #[tokio::test]
    async fn json_lines_pass_noise_and_half_lines_are_dropped() {
        let input = format!("{OK}\nhello there\n  [1]\n\n{{\"partial\"");
        assert_eq!(
            read(input.as_bytes(), 100).await,
            [json!({"jsonrpc": "2.0", "id": 2, "result": {}})]
        );
    }

    #[tokio::test]
    async fn a_line_after_a_byte_order_mark_is_read() {
        let input = format!(
            "\u{feff}{OK}\n\u{feff}{{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{{}}}}\n \t\u{feff}{OK}\n"
        );
        assert_eq!(
            read(input.as_bytes(), 100).await,
            [
                json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
                json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
                json!({"jsonrpc": "2.0", "id": 2, "result": {}})
            ]
        );
    }

    #[tokio::test]
    async fn oversized_response_becomes_an_error_for_its_id() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"text\":\"{}\"}}}}\n{OK}\n",
            "x".repeat(500)
        );
        let out = read(big.as_bytes(), 200).await;
        assert_eq!(out.len(), 2, "{out:?}");
        let (id, text) = error(&out[0]);
        assert_eq!(id, 7);
        assert!(text.contains("larger than 200 bytes"), "{text}");
        assert_eq!(out[1]["id"], 2);
        // Its id and `result` came first: the error does not wait for the line's end.
        let unended = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":\"{}",
            "x".repeat(500)
        );
        assert_eq!(read(unended.as_bytes(), 200).await[0]["id"], 8);
    }

    #[tokio::test]
    async fn too_deep_response_becomes_an_error_string_ids_too() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"result\":{}{}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let out = read(deep.as_bytes(), 1 << 20).await;
        let (id, text) = error(&out[0]);
        assert_eq!(id, "r-1");
        assert!(text.contains("deeper than 100"), "{text}");
        // Brackets inside strings do not count.
        let s = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"{}\"}}}}\n",
            "[".repeat(300)
        );
        assert_eq!(
            read(s.as_bytes(), 1 << 20).await[0]["result"]["t"],
            "[".repeat(300)
        );
    }

    #[tokio::test]
    async fn an_id_after_the_payload_is_found_too() {
        // Any key order is valid JSON: the id may follow a too large or too deep result.
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{{\"content\":[{{\"text\":\"{}\"}}],\"s\":\"{}\\\"}}\"}},\"id\":\"am-9\"}}\n{OK}\n",
            "x".repeat(9000),
            "y".repeat(400)
        );
        let out = read(big.as_bytes(), 5000).await;
        assert_eq!(out.len(), 2, "{out:?}");
        let (id, text) = error(&out[0]);
        assert_eq!(id, "am-9");
        assert!(text.contains("larger than 5000"), "{text}");
        assert_eq!(out[1]["id"], 2);
        let deep = format!(
            "{{\"result\":{}{},\"id\":3}}\n",
            "[".repeat(150),
            "]".repeat(150)
        );
        assert_eq!(read(deep.as_bytes(), 1 << 20).await[0]["id"], 3);
        // A request (it has a method) gets no reply, wherever its id is.
        for req in [
            format!(
                "{{\"params\":{{\"x\":\"{}\"}},\"method\":\"ping\",\"id\":4}}\n",
                "z".repeat(9000)
            ),
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":3,\"params\":\"{}\"}}\n",
                "y".repeat(9000)
            ),
        ] {
            assert_eq!(read(req.as_bytes(), 5000).await, [] as [Value; 0]);
        }
        // An id nested inside the payload is not the message's id.
        let nested = format!(
            "{{\"result\":{{\"id\":5,\"t\":\"{}\"}}}}\n",
            "q".repeat(9000)
        );
        assert_eq!(read(nested.as_bytes(), 5000).await, [] as [Value; 0]);
    }

    #[tokio::test]
    async fn an_answer_naming_a_request_that_cannot_be_read_fails_it() {
        let out = read_lines(&[
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type""#,
            r#"{"jsonrpc":"2.0","id":"x"}"#,
            r#"{"jsonrpc":"2.0","id":4,"error":"boom"}"#,
        ])
        .await;
        let (id, text) = error(&out[0]);
        assert_eq!(id, 3);
        assert!(
            text.starts_with("the server's answer is not valid JSON"),
            "{text}"
        );
        assert_eq!(
            error(&out[1]),
            (
                &json!("x"),
                "the server's answer has neither a result nor an error"
            )
        );
        assert_eq!(
            error(&out[2]),
            (&json!(4), r#"malformed error answer: "boom""#)
        );
    }

    #[tokio::test]
    async fn an_id_of_the_right_number_in_the_wrong_type_is_read_as_that_number() {
        let out = read_lines(&[
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0", "id" : 7.0 ,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"8","error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":"9","result":{"content":"#,
            r#"{"jsonrpc":"2.0","id":"\u0031\u0030","result":{}}"#,
            // Other strings stay as they are; a fraction is no request of ours.
            r#"{"jsonrpc":"2.0","id":"a7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"result":{}}"#,
        ])
        .await;
        let ids: Vec<&Value> = out.iter().map(|m| &m["id"]).collect();
        assert_eq!(
            ids,
            [
                &json!(7),
                &json!(7),
                &json!(8),
                &json!(9),
                &json!(10),
                &json!("a7")
            ]
        );
        // An answer discarded as too large or too deep is refused under that number too.
        let big = format!("{{\"id\":\"7\",\"result\":\"{}\"}}\n", "x".repeat(300));
        let deep = format!("{{\"id\":7.0,\"result\":{}}}\n", "[".repeat(150));
        for line in [big, deep] {
            assert_eq!(
                read(line.as_bytes(), 200).await[0]["id"],
                json!(7),
                "{line}"
            );
        }
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}}",
            "[".repeat(150)
        );
        let refused = serde_json::to_value(read_whole(deep.as_bytes())).unwrap();
        assert_eq!(refused["id"], json!(7));
    }

    #[tokio::test]
    async fn what_names_no_request_is_dropped() {
        let out = read_lines(&[
            "[1, 2]",
            r#"{"jsonrpc":"2.0","result":{}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":true,"result":{"#,
            // A malformed request of the server's gets no reply.
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        ])
        .await;
        assert_eq!(out, [json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
    }
}
