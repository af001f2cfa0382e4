//! The reader of a stdio server's output: only complete, bounded JSON lines get through.
//!
//! rmcp's line reader drops a line over its size limit, so a request whose answer is too large
//! (or nests too deep for serde_json, which stops at 128 levels) would simply wait for the
//! timeout. [`LineGuard`] reads the child's stdout for
//! [`LineTransport`](super::stdio_transport::LineTransport): it forwards complete JSON lines
//! (each cut to what a message may hold, [`bounded_message`](super::bounded::bounded_message)),
//! drops non-JSON noise, and replaces an oversized or over-deep answer by a JSON-RPC error for
//! the same request id, so the caller gets a clear error at once and the connection keeps
//! working.

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// Largest accepted message (one line), as rmcp's own default and its HTTP client's.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Deepest accepted nesting in one message; serde_json refuses beyond 128.
pub const MAX_MESSAGE_DEPTH: usize = 100;
/// How much of an oversized line is kept to find its request id.
const ID_SCAN_BYTES: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overflow {
    Size,
    Depth,
}

/// An `AsyncRead` filter that only lets complete, bounded JSON lines through.
pub struct LineGuard<R> {
    inner: R,
    chunk: Box<[u8]>,
    line: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    discarding: bool,
    /// While a line too large or too deep is discarded without its id seen in the first
    /// [`ID_SCAN_BYTES`]: its top-level outline, to find an id written after the payload.
    outline: Option<(Overflow, Outline)>,
    eof: bool,
    strings: Strings,
    depth: usize,
    max_line: usize,
}

impl<R> LineGuard<R> {
    pub fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_MESSAGE_BYTES)
    }

    pub fn with_limit(inner: R, max_line: usize) -> Self {
        LineGuard {
            inner,
            chunk: vec![0u8; 64 * 1024].into_boxed_slice(),
            line: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            discarding: false,
            outline: None,
            eof: false,
            strings: Strings::default(),
            depth: 0,
            max_line,
        }
    }

    /// A complete JSON line, cut to what a message may hold ([`bounded_message`]).
    ///
    /// [`bounded_message`]: super::bounded::bounded_message
    fn emit(out: &mut Vec<u8>, line: &[u8]) {
        // A line that is not UTF-8 could not be read at all (rmcp drops it, and the request it
        // answers would wait for its timeout, for ever with none): such bytes become U+FFFD.
        let line = String::from_utf8_lossy(line).into_owned();
        out.extend_from_slice(super::bounded::bounded_message(line).as_bytes());
        out.push(b'\n');
    }

    fn reset_scan(&mut self) {
        self.strings = Strings::default();
        self.depth = 0;
    }

    fn end_line(&mut self) {
        let trimmed = self
            .line
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .map(|i| self.line[i]);
        if matches!(trimmed, Some(b'{') | Some(b'[')) {
            Self::emit(&mut self.out, &self.line);
        }
        self.line.clear();
        self.reset_scan();
    }

    fn overflow(&mut self, kind: Overflow) {
        let prefix = &self.line[..self.line.len().min(ID_SCAN_BYTES)];
        match response_id(prefix) {
            Some(id) => self.refuse(kind, &id),
            None => {
                // The id may come after the payload: keep the line's outline while the rest
                // is discarded, and look again at its end.
                let mut outline = Outline::default();
                outline.feed(&self.line);
                self.outline = Some((kind, outline));
            }
        }
        self.line.clear();
        self.reset_scan();
        self.discarding = true;
    }

    /// Answers request `id` with an error saying why its response was discarded.
    fn refuse(&mut self, kind: Overflow, id: &str) {
        let message = match kind {
            Overflow::Size => format!("the server's message was larger than {} bytes and was discarded", self.max_line),
            Overflow::Depth => format!("the server's message nested deeper than {MAX_MESSAGE_DEPTH} levels and was discarded"),
        };
        let line = super::bounded::error_answer(id, -32603, &message);
        Self::emit(&mut self.out, line.as_bytes());
    }

    /// The end of a discarded line: an id found in its outline gets its error now.
    fn end_discard(&mut self) {
        self.discarding = false;
        if let Some((kind, outline)) = self.outline.take() {
            if let Some(id) = outline.id() {
                self.refuse(kind, &id);
            }
        }
    }

    /// Feeds `n` bytes of `self.chunk`.
    fn process(&mut self, n: usize) {
        let mut start = 0usize;
        let mut i = 0usize;
        while i < n {
            let b = self.chunk[i];
            if self.discarding {
                let newline = memchr::memchr(b'\n', &self.chunk[i..n]).map(|p| i + p);
                let end = newline.unwrap_or(n);
                if let Some((_, outline)) = &mut self.outline {
                    outline.feed(&self.chunk[i..end]);
                }
                match newline {
                    Some(p) => {
                        self.end_discard();
                        i = p + 1;
                        start = i;
                    }
                    None => i = n,
                }
                continue;
            }
            if b == b'\n' {
                self.line.extend_from_slice(&self.chunk[start..i]);
                self.end_line();
                i += 1;
                start = i;
                continue;
            }
            if self.strings.inside {
                self.strings.closes(b);
            } else {
                match b {
                    b'"' => self.strings.inside = true,
                    b'{' | b'[' => {
                        self.depth += 1;
                        if self.depth > MAX_MESSAGE_DEPTH {
                            // With this bracket, so the outline counts every level.
                            self.line.extend_from_slice(&self.chunk[start..=i]);
                            self.overflow(Overflow::Depth);
                            i += 1;
                            continue;
                        }
                    }
                    b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
            i += 1;
            if self.line.len() + (i - start) > self.max_line {
                // Whole, so the outline sees every byte up to here.
                self.line.extend_from_slice(&self.chunk[start..i]);
                self.overflow(Overflow::Size);
            }
        }
        if !self.discarding && start < n {
            self.line.extend_from_slice(&self.chunk[start..n]);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineGuard<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.out_pos < this.out.len() {
                let n = (this.out.len() - this.out_pos).min(buf.remaining());
                buf.put_slice(&this.out[this.out_pos..this.out_pos + n]);
                this.out_pos += n;
                if this.out_pos == this.out.len() {
                    this.out.clear();
                    this.out_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut rb = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut rb) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        this.eof = true;
                    } else {
                        this.process(n);
                    }
                }
            }
        }
    }
}

/// Whether a byte of JSON text is inside a string (escapes included).
#[derive(Default, Clone, Copy)]
struct Strings {
    inside: bool,
    escape: bool,
}

impl Strings {
    /// Feeds one byte inside a string; true when it is the closing quote.
    #[inline]
    fn closes(&mut self, b: u8) -> bool {
        if self.escape {
            self.escape = false;
        } else if b == b'\\' {
            self.escape = true;
        } else if b == b'"' {
            self.inside = false;
            return true;
        }
        false
    }
}

/// The top level of a JSON line with every nested value replaced by `0` and long strings by
/// `""`: `{"result":{…16 MiB…},"id":"am-7"}` becomes `{"result":0,"id":"am-7"}`, which
/// [`response_id`] reads. Bounded: an outline over 8 KiB is given up on.
#[derive(Default)]
struct Outline {
    out: Vec<u8>,
    depth: usize,
    strings: Strings,
    /// The top-level string being read, or `None` once it passed 256 bytes.
    text: Option<Vec<u8>>,
    given_up: bool,
}

impl Outline {
    const MAX_BYTES: usize = 8 * 1024;
    const MAX_STRING: usize = 256;

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.given_up {
                return;
            }
            let top = self.depth == 1;
            if self.strings.inside {
                if self.strings.closes(b) {
                    if top {
                        match self.text.take() {
                            Some(text) => {
                                self.out.push(b'"');
                                self.out.extend_from_slice(&text);
                                self.out.push(b'"');
                            }
                            None => self.out.extend_from_slice(b"\"\""),
                        }
                    }
                    continue;
                }
                if top {
                    if let Some(text) = &mut self.text {
                        if text.len() < Self::MAX_STRING {
                            text.push(b);
                        } else {
                            self.text = None;
                        }
                    }
                }
                continue;
            }
            match b {
                b'"' => {
                    self.strings.inside = true;
                    self.text = Some(Vec::new());
                }
                b'{' | b'[' => {
                    self.depth += 1;
                    match self.depth {
                        1 => self.out.push(b),
                        2 => self.out.push(b'0'),
                        _ => {}
                    }
                }
                b'}' | b']' => {
                    if top {
                        self.out.push(b);
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                _ if b.is_ascii_whitespace() => {}
                _ if top => self.out.push(b),
                _ => {}
            }
            if self.out.len() > Self::MAX_BYTES {
                self.given_up = true;
            }
        }
    }

    fn id(&self) -> Option<String> {
        if self.given_up {
            return None;
        }
        response_id(&self.out)
    }
}

/// The raw JSON text of the top-level `"id"` of a response, read from the start of a line;
/// `None` for requests and notifications (they carry `"method"`) or when no plain id is seen.
pub(crate) fn response_id(prefix: &[u8]) -> Option<String> {
    let mut depth = 0usize;
    let mut i = 0usize;
    let mut id = None;
    while i < prefix.len() {
        match prefix[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < prefix.len() && prefix[j] != b'"' {
                    if prefix[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                if j >= prefix.len() {
                    break;
                }
                // A string at depth 1 followed by ':' is a key.
                let mut k = j + 1;
                while k < prefix.len() && prefix[k].is_ascii_whitespace() {
                    k += 1;
                }
                if depth == 1 && k < prefix.len() && prefix[k] == b':' {
                    i = k + 1;
                    let key = &prefix[start..j];
                    if key == b"method" {
                        return None;
                    }
                    if key == b"id" {
                        let mut v = i;
                        while v < prefix.len() && prefix[v].is_ascii_whitespace() {
                            v += 1;
                        }
                        let vstart = v;
                        if v < prefix.len() && prefix[v] == b'"' {
                            v += 1;
                            while v < prefix.len() && prefix[v] != b'"' && prefix[v] != b'\\' {
                                v += 1;
                            }
                            if v < prefix.len() && prefix[v] == b'"' {
                                id =
                                    Some(String::from_utf8_lossy(&prefix[vstart..=v]).into_owned());
                            }
                        } else {
                            while v < prefix.len()
                                && (prefix[v].is_ascii_digit() || prefix[v] == b'-')
                            {
                                v += 1;
                            }
                            if v > vstart {
                                id = Some(String::from_utf8_lossy(&prefix[vstart..v]).into_owned());
                            }
                        }
                        i = v;
                    }
                    continue;
                }
                i = j + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn filtered(input: &[u8], limit: usize) -> String {
        let mut g = LineGuard::with_limit(input, limit);
        let mut out = Vec::new();
        g.read_to_end(&mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    #[tokio::test]
    async fn json_lines_pass_noise_is_dropped() {
        let out = filtered(b"{\"a\":1}\nhello there\n  [1]\n\n{\"partial\"", 100).await;
        assert_eq!(out, "{\"a\":1}\n  [1]\n");
    }

    #[tokio::test]
    async fn oversized_response_becomes_an_error_for_its_id() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"text\":\"{}\"}}}}\n{{\"ok\":true}}\n",
            "x".repeat(500)
        );
        let out = filtered(big.as_bytes(), 200).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        let err: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(err["id"], 7);
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 200 bytes"));
        assert_eq!(lines[1], "{\"ok\":true}");
    }

    #[tokio::test]
    async fn too_deep_response_becomes_an_error_string_ids_too() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"result\":{}{}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let out = filtered(deep.as_bytes(), 1 << 20).await;
        let err: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(err["id"], "r-1");
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deeper than 100"));
        // Brackets inside strings do not count.
        let s = format!("{{\"id\":1,\"result\":\"{}\"}}\n", "[".repeat(300));
        assert_eq!(filtered(s.as_bytes(), 1 << 20).await, s);
    }

    #[tokio::test]
    async fn an_id_after_the_payload_is_found_too() {
        // Any key order is valid JSON: the id may follow a too large or too deep result.
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{{\"content\":[{{\"text\":\"{}\"}}],\"s\":\"{}\\\"}}\"}},\"id\":\"am-9\"}}\n{{\"ok\":true}}\n",
            "x".repeat(9000),
            "y".repeat(400)
        );
        let out = filtered(big.as_bytes(), 5000).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        let err: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(err["id"], "am-9");
        assert!(err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 5000"));
        assert_eq!(lines[1], "{\"ok\":true}");
        let deep = format!(
            "{{\"result\":{}{},\"id\":3}}\n",
            "[".repeat(150),
            "]".repeat(150)
        );
        let err: serde_json::Value =
            serde_json::from_str(filtered(deep.as_bytes(), 1 << 20).await.trim()).unwrap();
        assert_eq!(err["id"], 3);
        // A request (it has a method) gets no reply, wherever its id is.
        let req = format!(
            "{{\"params\":{{\"x\":\"{}\"}},\"method\":\"ping\",\"id\":4}}\n",
            "z".repeat(9000)
        );
        assert_eq!(filtered(req.as_bytes(), 5000).await, "");
        // An id nested inside the payload is not the message's id.
        let nested = format!(
            "{{\"result\":{{\"id\":5,\"t\":\"{}\"}}}}\n",
            "q".repeat(9000)
        );
        assert_eq!(filtered(nested.as_bytes(), 5000).await, "");
    }

    #[tokio::test]
    async fn oversized_requests_are_dropped_without_a_reply() {
        let req = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":3,\"params\":\"{}\"}}\n",
            "y".repeat(500)
        );
        assert_eq!(filtered(req.as_bytes(), 100).await, "");
    }

    #[test]
    fn id_extraction() {
        assert_eq!(
            response_id(br#"{"jsonrpc": "2.0", "id": 12, "result": {"id": 99"#).as_deref(),
            Some("12")
        );
        assert_eq!(
            response_id(br#"{"result": {"id": 99}, "id": "a"}"#).as_deref(),
            Some("\"a\"")
        );
        assert_eq!(response_id(br#"{"method": "x", "id": 1"#), None);
        assert_eq!(response_id(br#"{"text": "\"id\": 5", "#), None);
    }
}
