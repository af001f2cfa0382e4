//! `tools/call` over a stdio connection without a task per call.
//!
//! rmcp's session sends each request through a channel to its service task, spawns a task to
//! write it, and parses every answer through untagged enums; per call that is about 10 KB of
//! future state, several task wake-ups and tens of microseconds, which caps a connection at a
//! few thousand calls per second on a 2-CPU machine. Tool calls are the hot path, so they take a
//! shorter one, beside rmcp's session (which still does the handshake and the listing):
//!
//! - [`FastCalls::call`] writes the request line straight into the connection's
//!   [`BatchWriter`](super::batch_write::BatchWriter) buffer (whole messages, so it never lands
//!   inside one of rmcp's) and files a callback under the request id. Ids are strings
//!   `"am-<n>"`; rmcp numbers its own requests, so the two never collide.
//! - The stdout reader ([`LineGuard`](super::stdio::LineGuard)) offers every line to
//!   [`FastCalls::claim`] first: an answer to one of our ids is parsed once, typed, and handed
//!   to its callback on the reader's thread. Messages the server sends on its own are taken
//!   too: its requests are answered there (`ping`, or "method not found") and its
//!   notifications dropped. Every other line (answers to rmcp's requests) goes on to rmcp.
//! - One timer task fails calls whose deadline passed. When the server's output ends, or the
//!   session is closed, every waiting call is answered at once: no call waits forever.

use super::batch_write::BatchHandle;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Requests waiting to be written beyond this make new calls fail instead of piling up
/// (the server stopped reading its input).
pub const MAX_UNWRITTEN: usize = 64 * 1024 * 1024;

/// Replies to the server's own requests are dropped while this much waits to be written.
pub const MAX_REPLY_BACKLOG: usize = 1024 * 1024;
/// Longest request id of the server's that is answered (its JSON text).
pub const MAX_SERVER_ID_BYTES: usize = 256;

/// How a call ended, before it is worded for the model.
#[derive(Debug)]
pub enum CallOutcome {
    Done(Box<CallToolResult>),
    /// A JSON-RPC error answer, or an answer that is not a valid result (raw, not yet cleaned).
    Failed(String),
    TimedOut,
    /// The session was closed by us.
    Closed,
    /// The server's output ended (it exited or closed stdout).
    ServerGone,
    /// The caller gave up on the call (see [`FastCalls::cancel`]).
    Cancelled,
    /// A result whose structured content was left out unread: it held more than
    /// [`MAX_ANSWER_VALUES`] values (its `data` says `{"truncated": true}`).
    DoneWithoutStructured(Box<CallToolResult>),
}

/// JSON values (object keys count too) a `tools/call` answer may hold. Parsing builds a tree
/// of some 50 bytes per value, so 15 MB of `[0,0,...]` cost 400 MB of memory; beyond this
/// the structured content is left out unread, and if the rest is still over, the call fails.
/// Answers under [`COUNT_FROM_BYTES`] are not counted: they cannot come near it.
pub const MAX_ANSWER_VALUES: usize = 250_000;
const COUNT_FROM_BYTES: usize = 256 * 1024;

/// Parses a `tools/call` result within [`MAX_ANSWER_VALUES`]; see there.
fn typed_result(raw: &str) -> CallOutcome {
    let parse = |raw: &str| match serde_json::from_str::<CallToolResult>(raw) {
        Ok(r) => Ok(r),
        Err(e) => with_unknown_blocks_named(raw)
            .or_else(|| {
                // Python's json.dumps writes a lone surrogate as `\ud800`, which serde refuses:
                // such a string gets U+FFFD there instead of failing the whole result.
                let repaired = lone_surrogates_replaced(raw)?;
                serde_json::from_str::<CallToolResult>(&repaired)
                    .ok()
                    .or_else(|| with_unknown_blocks_named(&repaired))
            })
            .ok_or_else(|| format!("the server's result is not a valid tools/call result: {e}")),
    };
    if !over_value_budget(raw.as_bytes()) {
        return parse(raw).map_or_else(CallOutcome::Failed, |r| CallOutcome::Done(Box::new(r)));
    }
    match without_structured(raw, None).and_then(|rest| parse(&rest)) {
        Ok(r) => CallOutcome::DoneWithoutStructured(Box::new(r)),
        Err(e) => CallOutcome::Failed(e),
    }
}

/// A message on its way to rmcp (a listing, a handshake answer, an HTTP event) with its lone
/// surrogate escapes replaced as [`lone_surrogates_replaced`] does; `None` when it has none
/// (found by a byte search first, so a message without `\ud`/`\uD` costs two scans).
pub fn surrogates_repaired(message: &[u8]) -> Option<String> {
    let finder = |needle: &[u8]| memchr::memmem::find(message, needle).is_some();
    if !finder(b"\\ud") && !finder(b"\\uD") {
        return None;
    }
    lone_surrogates_replaced(std::str::from_utf8(message).ok()?)
}

/// JSON text `raw` with every `\uXXXX` escape of a surrogate that is not half of a pair
/// replaced by `\ufffd`; `None` when there is none.
fn lone_surrogates_replaced(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let hex = |at: usize| -> Option<u32> {
        let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u32::from_str_radix(digits, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u32> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| hex(at + 2))
            .flatten()
    };
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut in_string, mut changed) = (0, false, false);
    while i < b.len() {
        match b[i] {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                let step = match escape_at(i) {
                    Some(0xD800..=0xDBFF)
                        if escape_at(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low)) =>
                    {
                        12 // a pair: kept
                    }
                    Some(0xD800..=0xDFFF) => {
                        out.extend_from_slice(b"\\ufffd");
                        changed = true;
                        i += 6;
                        continue;
                    }
                    Some(_) => 6,
                    None => 2,
                };
                let end = (i + step).min(b.len());
                out.extend_from_slice(&b[i..end]);
                i = end;
                continue;
            }
            _ => {}
        }
        out.push(b[i]);
        i += 1;
    }
    // Only escapes were replaced, by ASCII: the text is still UTF-8.
    changed.then(|| String::from_utf8(out).ok()).flatten()
}

/// Whether JSON text `raw` holds more than [`MAX_ANSWER_VALUES`] values (texts under
/// [`COUNT_FROM_BYTES`] are not counted: they cannot).
pub fn over_value_budget(raw: &[u8]) -> bool {
    raw.len() >= COUNT_FROM_BYTES && count_values(raw, MAX_ANSWER_VALUES) > MAX_ANSWER_VALUES
}

/// For a line going to rmcp (an answer to its handshake or a listing) that is over
/// [`MAX_ANSWER_VALUES`]: the error answer to put in its place, so that rmcp's request fails
/// with the reason instead of rmcp building the message.
pub fn refused_for_values(line: &[u8]) -> Option<Vec<u8>> {
    let id = serde_json::from_slice::<Envelope<'_>>(line).ok()?.id?;
    Some(error_answer(id.get(), -32603, &too_many_values()).into_bytes())
}

/// The JSON-RPC error answer to request `id` (its JSON text), as one message without a
/// newline: every error this client puts in the server's place or sends it is worded here.
pub fn error_answer(id: &str, code: i64, message: &str) -> String {
    let error = serde_json::json!({"code": code, "message": message});
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}")
}

/// A `tools/call` result's text with its `structuredContent` left out unread (or replaced by
/// `marker`), when that brings it within [`MAX_ANSWER_VALUES`]; else the error to fail the
/// call with. Only the top level is parsed (members as raw text, which serialize as they are).
pub fn without_structured(raw: &str, marker: Option<&RawValue>) -> Result<String, String> {
    let mut members = serde_json::from_str::<BTreeMap<String, &RawValue>>(raw)
        .map_err(|e| format!("the server's result is not a valid tools/call result: {e}"))?;
    members.remove("structuredContent");
    if let Some(marker) = marker {
        members.insert("structuredContent".into(), marker);
    }
    let rest = serde_json::to_string(&members).unwrap_or_default();
    if over_value_budget(rest.as_bytes()) {
        return Err(too_many_values());
    }
    Ok(rest)
}

/// Why an answer over [`MAX_ANSWER_VALUES`] failed its call.
pub fn too_many_values() -> String {
    format!("the server's message holds more than {MAX_ANSWER_VALUES} JSON values; it was not read")
}

/// Counts the values in JSON text `raw` (object keys included), stopping once past `cap`,
/// without building anything: strings are skipped with `memchr`.
pub fn count_values(raw: &[u8], cap: usize) -> usize {
    let mut n = 0;
    let mut i = 0;
    let mut in_scalar = false;
    while i < raw.len() && n <= cap {
        match raw[i] {
            b'"' => {
                n += 1;
                in_scalar = false;
                i += 1;
                // To the closing quote: one not escaped by an odd run of backslashes.
                loop {
                    // Text that is not JSON (an SSE event is counted before anything parses
                    // it) may end in a backslash: past the end, the string is unterminated.
                    let Some(rest) = raw.get(i..) else {
                        return n;
                    };
                    match memchr::memchr2(b'"', b'\\', rest) {
                        None => return n,
                        Some(k) if raw[i + k] == b'\\' => i += k + 2,
                        Some(k) => {
                            i += k;
                            break;
                        }
                    }
                }
            }
            b'{' | b'[' => {
                n += 1;
                in_scalar = false;
            }
            b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' => in_scalar = false,
            _ => {
                if !in_scalar {
                    n += 1;
                    in_scalar = true;
                }
            }
        }
        i += 1;
    }
    n
}

/// Called once with the outcome, on whichever thread settles the call.
pub type Waiter = Box<dyn FnOnce(CallOutcome) + Send>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ended {
    Closed,
    ServerGone,
}

#[derive(Default)]
struct State {
    pending: HashMap<u64, Waiter>,
    /// (deadline, id) in the order calls were made; with one timeout for every call of a
    /// connection that is also deadline order. Settled ids stay until their deadline passes
    /// or the queue is compacted.
    deadlines: VecDeque<(Instant, u64)>,
    ended: Option<Ended>,
}

pub struct FastCalls {
    state: Mutex<State>,
    writer: BatchHandle,
    timeout: Option<Duration>,
    next_id: AtomicU64,
    timer: Notify,
}

/// The top level of a JSON-RPC message, its members unparsed.
#[derive(Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub method: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct RpcError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
}

const ID_PREFIX: &str = "am-";

impl FastCalls {
    /// Must be created inside a tokio runtime: the timer task is spawned on it.
    pub fn new(writer: BatchHandle, timeout: Option<Duration>) -> Arc<FastCalls> {
        let calls = Arc::new(FastCalls {
            state: Mutex::new(State::default()),
            writer,
            timeout,
            next_id: AtomicU64::new(1),
            timer: Notify::new(),
        });
        if timeout.is_some() {
            tokio::spawn(expire_loop(calls.clone()));
        }
        calls
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update under this lock is a single insert or remove; a poisoned lock is usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends `tools/call` for `name` and files `done` under its id. `done` is always called
    /// exactly once: with the answer, a timeout, a cancellation or the end of the session.
    /// Returns the call's number (for [`FastCalls::cancel`]).
    pub fn call(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
        done: Waiter,
    ) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut line = Vec::with_capacity(96 + name.len());
        line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"");
        line.extend_from_slice(ID_PREFIX.as_bytes());
        line.extend_from_slice(id.to_string().as_bytes());
        line.extend_from_slice(b"\",\"method\":\"tools/call\",\"params\":{\"name\":");
        // Serializing a str or a map of JSON values cannot fail.
        let _ = serde_json::to_writer(&mut line, name);
        line.extend_from_slice(b",\"arguments\":");
        let _ = serde_json::to_writer(&mut line, arguments);
        line.extend_from_slice(b"}}\n");
        {
            let mut st = self.lock();
            if let Some(ended) = st.ended {
                drop(st);
                done(ended.outcome());
                return id;
            }
            st.pending.insert(id, done);
            if let Some(t) = self.timeout {
                let wake = st.deadlines.is_empty();
                st.deadlines.push_back((Instant::now() + t, id));
                // Settled calls leave their deadline behind; keep the queue near the live set.
                if st.deadlines.len() > 1024 && st.deadlines.len() > 4 * st.pending.len() {
                    let State {
                        pending, deadlines, ..
                    } = &mut *st;
                    deadlines.retain(|(_, id)| pending.contains_key(id));
                }
                if wake {
                    self.timer.notify_one();
                }
            }
        }
        // Filed before it is written, so even an instant answer finds its waiter. Written from
        // this thread when nothing is queued or being written (no task wake-up, which costs
        // more than the write: a burst of 200 calls from one asyncio loop went 8% faster on the
        // mean than when calls made with others in flight were left to the writer task);
        // otherwise queued for the writer task, which sends what piles up in one write.
        if let Err(e) = self.writer.append(&line, MAX_UNWRITTEN) {
            let waiter = self.lock().pending.remove(&id);
            if let Some(done) = waiter {
                done(CallOutcome::Failed(format!(
                    "could not send the request: {e}"
                )));
            }
        }
        id
    }

    /// Gives up on call `id`: its waiter gets [`CallOutcome::Cancelled`] and the server is
    /// told with `notifications/cancelled`, so it can stop the work. `false` (and nothing
    /// sent) when the call had already ended.
    pub fn cancel(&self, id: u64, reason: &str) -> bool {
        let Some(done) = self.lock().pending.remove(&id) else {
            return false;
        };
        let _ = self
            .writer
            .append(cancel_notice(id, reason).as_bytes(), MAX_UNWRITTEN);
        done(CallOutcome::Cancelled);
        true
    }

    /// Sorts a line of the server's output: `false` hands it on to rmcp, `true` means it was
    /// dealt with here. Only a well-formed answer to one of rmcp's own requests goes on: a JSON
    /// object without a `method`, with a string or number `id` and a `result` or an `error`.
    ///
    /// - An answer to one of our calls settles that call (and a late or repeated one is
    ///   dropped, as rmcp would drop it).
    /// - A message the server sends on its own (one with a `method`) is taken too: requests
    ///   are answered here (see [`FastCalls::answer`]) and notifications dropped, as nothing
    ///   of this client listens to them. rmcp spawns a task per such message and reads faster
    ///   than those tasks end, so a server flooding pings grew the client by gigabytes; here
    ///   each costs one short reply line, and only while the server reads them.
    /// - Anything else is dropped: text that is not JSON (after failing one of our calls if it
    ///   still names it), JSON that is not a single message (batches, which rmcp does not
    ///   take, duplicate keys, no id). rmcp answers each of those with an "invalid request"
    ///   error and waits for that write before reading on, so a server flooding them without
    ///   reading its input stalled the connection.
    ///
    /// Every line is parsed (with borrowed raw values, so cheaply): a prefilter on the bytes
    /// `"method"` would let an escaped key (`"\u006dethod"`) through.
    pub fn claim(&self, line: &[u8]) -> bool {
        // serde reads a struct from a JSON array too (fields by position): only objects here.
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return true;
        }
        let env = match serde_json::from_slice::<Envelope<'_>>(line) {
            Ok(env) => env,
            // Not JSON, but it names one of our calls (a truncated or garbled answer): fail
            // that call now rather than let it wait for its timeout.
            Err(e) => {
                let id = super::stdio::response_id(&line[..line.len().min(4096)])
                    .and_then(|raw| our_id(&raw));
                if let Some(done) = id.and_then(|id| self.lock().pending.remove(&id)) {
                    done(CallOutcome::Failed(format!(
                        "the server's answer is not valid JSON: {e}"
                    )));
                }
                return true;
            }
        };
        if let Some(method) = env.method {
            self.answer(env.id, method);
            return true;
        }
        let Some(raw_id) = env.id.map(RawValue::get) else {
            return true;
        };
        let Some(id) = our_id(raw_id) else {
            return !(is_string_or_number(raw_id) && (env.result.is_some() || env.error.is_some()));
        };
        // An answer after the call timed out (or a duplicate) finds no waiter: dropped here,
        // as rmcp would drop it.
        let Some(done) = self.lock().pending.remove(&id) else {
            return true;
        };
        let outcome = match (env.result, env.error) {
            (_, Some(err)) => match serde_json::from_str::<RpcError>(err.get()) {
                Ok(e) => CallOutcome::Failed(format!("{} (code {})", e.message, e.code)),
                Err(_) => CallOutcome::Failed(format!("malformed error answer: {}", err.get())),
            },
            (Some(result), None) => typed_result(result.get()),
            (None, None) => {
                CallOutcome::Failed("the server's answer has neither a result nor an error".into())
            }
        };
        done(outcome);
        true
    }

    /// Replies to a request the server sent: `ping` gets its empty result, any other method
    /// JSON-RPC's "method not found" (-32601), since this client offers the server nothing
    /// (no sampling, roots or elicitation), and a method that is not a string "invalid
    /// request" (-32600). A notification (no id), or an id that is not a
    /// string or number of at most [`MAX_SERVER_ID_BYTES`], gets nothing. Replies are dropped
    /// once [`MAX_REPLY_BACKLOG`] bytes wait to be written: a server that floods requests
    /// without reading its input is not answered rather than buffered for.
    fn answer(&self, id: Option<&RawValue>, method: &RawValue) {
        let Some(id) = id.map(RawValue::get) else {
            return;
        };
        if id.len() > MAX_SERVER_ID_BYTES || !is_string_or_number(id) {
            return;
        }
        let method = serde_json::from_str::<std::borrow::Cow<'_, str>>(method.get());
        let mut line = match method.as_deref() {
            Ok("ping") => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"),
            Ok(name) => error_answer(id, -32601, &method_not_offered(name)),
            // JSON-RPC's "invalid request": the message is not a request at all.
            Err(_) => error_answer(id, -32600, "Invalid Request: the method is not a string"),
        };
        line.push('\n');
        let _ = self.writer.append(line.as_bytes(), MAX_REPLY_BACKLOG);
    }

    /// The session was closed: waiting calls and later ones get [`CallOutcome::Closed`].
    pub fn close(&self) {
        self.end(Ended::Closed);
    }

    /// The server's output ended: waiting calls and later ones get
    /// [`CallOutcome::ServerGone`] (or `Closed`, when the session was closed first).
    pub fn server_gone(&self) {
        self.end(Ended::ServerGone);
    }

    fn end(&self, how: Ended) {
        let (waiters, ended) = {
            let mut st = self.lock();
            let ended = *st.ended.get_or_insert(how);
            st.deadlines.clear();
            (std::mem::take(&mut st.pending), ended)
        };
        self.timer.notify_one();
        for (_, done) in waiters {
            done(ended.outcome());
        }
    }

    /// Calls waiting for an answer (for tests and diagnostics).
    pub fn in_flight(&self) -> usize {
        self.lock().pending.len()
    }
}

/// The message of the "method not found" (-32601) reply to a request of the server's other
/// than `ping` (the client offers no sampling, roots or elicitation), over stdio and HTTP.
pub fn method_not_offered(method: &str) -> String {
    let method = super::sanitize::sanitize_marked(method, 100);
    format!("Method not found: this client answers only ping, not {method}")
}

/// The `notifications/cancelled` line for call `id`.
/// The content block kinds of rmcp's `ContentBlock` (MCP 2025-06).
const KNOWN_BLOCKS: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

/// A result whose only fault is content blocks of kinds this client does not know (a later
/// protocol's, or a server's own): each such block becomes a text line naming its type, so the
/// rest of the answer is not lost. `None` when the result is wrong in other ways too.
fn with_unknown_blocks_named(raw: &str) -> Option<CallToolResult> {
    unknown_blocks_named(&mut serde_json::from_str(raw).ok()?)
}

/// [`with_unknown_blocks_named`] on a parsed result, which keeps the replacements even when
/// the result is still not valid (over HTTP, rmcp keeps a result it could not type as a
/// `CustomResult` value).
pub fn unknown_blocks_named(value: &mut serde_json::Value) -> Option<CallToolResult> {
    let blocks = value.get_mut("content")?.as_array_mut()?;
    let mut replaced = false;
    for block in blocks.iter_mut() {
        let kind = block.get("type").and_then(serde_json::Value::as_str);
        if kind.is_some_and(|k| KNOWN_BLOCKS.contains(&k)) {
            continue; // a malformed known block still fails the call
        }
        let kind = kind
            .map(|t| super::sanitize::sanitize_marked(t, 40))
            .unwrap_or_else(|| "without a type".into());
        *block = serde_json::json!({"type": "text", "text": format!("[unsupported content block: {kind}]")});
        replaced = true;
    }
    if !replaced {
        return None;
    }
    CallToolResult::deserialize(&*value).ok()
}

fn cancel_notice(id: u64, reason: &str) -> String {
    let reason = serde_json::Value::from(reason);
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"{ID_PREFIX}{id}\",\"reason\":{reason}}}}}\n"
    )
}

/// Whether a JSON value's text (already parsed, so valid) is a string or a number: the ids
/// JSON-RPC allows.
pub fn is_string_or_number(raw: &str) -> bool {
    raw.bytes()
        .next()
        .is_some_and(|b| b == b'"' || b == b'-' || b.is_ascii_digit())
}

/// The call number in a JSON id text like `"am-12"`.
fn our_id(raw: &str) -> Option<u64> {
    serde_json::from_str::<&str>(raw)
        .ok()?
        .strip_prefix(ID_PREFIX)?
        .parse()
        .ok()
}

impl Ended {
    fn outcome(self) -> CallOutcome {
        match self {
            Ended::Closed => CallOutcome::Closed,
            Ended::ServerGone => CallOutcome::ServerGone,
        }
    }
}

impl Drop for FastCalls {
    fn drop(&mut self) {
        let waiters = std::mem::take(&mut self.lock().pending);
        for (_, done) in waiters {
            done(CallOutcome::Closed);
        }
    }
}

/// Fails calls whose deadline passed. Ends with the session ([`FastCalls::close`] or
/// [`FastCalls::server_gone`], which the reader calls when it ends or is dropped).
async fn expire_loop(calls: Arc<FastCalls>) {
    loop {
        let next = {
            let st = calls.lock();
            if st.ended.is_some() {
                return;
            }
            st.deadlines.front().map(|d| d.0)
        };
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at) => {}
                    _ = calls.timer.notified() => {}
                }
            }
            None => calls.timer.notified().await,
        }
        let now = Instant::now();
        let expired: Vec<(u64, Waiter)> = {
            let mut st = calls.lock();
            let mut out = Vec::new();
            while st.deadlines.front().is_some_and(|d| d.0 <= now) {
                if let Some((_, id)) = st.deadlines.pop_front() {
                    if let Some(done) = st.pending.remove(&id) {
                        out.push((id, done));
                    }
                }
            }
            out
        };
        for (id, done) in expired {
            // Tell the server, as the protocol asks, so it can stop the work (best effort).
            let notice = cancel_notice(id, "the client's timeout expired");
            let _ = calls.writer.append(notice.as_bytes(), MAX_UNWRITTEN);
            done(CallOutcome::TimedOut);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_counted_without_parsing_and_strings_skipped_whole() {
        let raw = br#" {"a": [1, -2.5e3, {"b": "x\"y\\", "c": true}], "d": null} "#;
        // {, "a", [, 1, -2.5e3, {, "b", "x\"y\\", "c", true, "d", null
        assert_eq!(count_values(raw, 100), 12);
        assert_eq!(count_values(raw, 3), 4, "stops once past the cap");
        assert_eq!(count_values(br#"["{[,:", "\\", 1]"#, 100), 4);
        assert_eq!(count_values(br#""unterminated \""#, 100), 1);
        // Not JSON at all (an SSE event is counted before it is parsed): no panic.
        assert_eq!(count_values(br#"["a\"#, 100), 2);
        assert_eq!(count_values(b"\"\\", 100), 1);
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        let raw =
            r#"{"content":[{"type":"text","text":"a\ud800b \udc00 \ud83d\ude00 \\ud800 \u00e9"}]}"#;
        assert!(serde_json::from_str::<CallToolResult>(raw).is_err());
        match typed_result(raw) {
            CallOutcome::Done(r) => assert_eq!(
                r.content[0].as_text().unwrap().text,
                "a\u{fffd}b \u{fffd} \u{1f600} \\ud800 \u{e9}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(lone_surrogates_replaced(r#"{"t":"\ud83d\ude00 ok"}"#), None);
        assert_eq!(
            lone_surrogates_replaced(r#"["\ud800"]"#).as_deref(),
            Some(r#"["\ufffd"]"#)
        );
        // Cut short: no panic.
        assert_eq!(lone_surrogates_replaced(r#""\ud8"#), None);
        // What goes to rmcp (listings, HTTP events): found by a byte search first.
        assert_eq!(surrogates_repaired(br#"{"d":"plain"}"#), None);
        assert_eq!(surrogates_repaired(br#"{"d":"\uD83D\uDE00"}"#), None);
        assert_eq!(
            surrogates_repaired(br#"{"d":"x\uDC00"}"#).as_deref(),
            Some(r#"{"d":"x\ufffd"}"#)
        );
        assert_eq!(surrogates_repaired(b"{\"d\":\"\\ud800\xff\"}"), None); // not UTF-8
    }

    #[test]
    fn a_result_of_millions_of_values_is_cut_before_it_is_parsed() {
        let zeros = vec!["0"; 400_000].join(",");
        let raw = format!(
            r#"{{"structuredContent":{{"v":[{zeros}]}},"content":[{{"type":"text","text":"kept"}}]}}"#
        );
        match typed_result(&raw) {
            CallOutcome::DoneWithoutStructured(r) => {
                assert_eq!(r.content[0].as_text().unwrap().text, "kept");
                assert!(r.structured_content.is_none());
            }
            other => panic!("{other:?}"),
        }
        let blocks = vec![r#"{"type":"text","text":""}"#; 100_000].join(",");
        match typed_result(&format!(r#"{{"content":[{blocks}]}}"#)) {
            CallOutcome::Failed(e) => assert!(e.contains("more than 250000 JSON values"), "{e}"),
            other => panic!("{other:?}"),
        }
        // Small answers are not counted, and parse as before.
        let small = format!(
            r#"{{"content":[],"structuredContent":[{}]}}"#,
            vec!["0"; 1000].join(",")
        );
        assert!(matches!(typed_result(&small), CallOutcome::Done(_)));
    }

    use super::*;
    use crate::mcp::batch_write::BatchWriter;
    use crate::mcp::stdio::LineGuard;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
    use tokio::sync::mpsc;

    type Outcomes = mpsc::UnboundedReceiver<CallOutcome>;

    fn waiter(tx: &mpsc::UnboundedSender<CallOutcome>) -> Waiter {
        let tx = tx.clone();
        Box::new(move |o| {
            let _ = tx.send(o);
        })
    }

    /// Fast calls over an in-memory pipe; returns the server's view of the requests.
    fn setup(
        timeout: Option<Duration>,
    ) -> (
        Arc<FastCalls>,
        BatchWriter,
        BufReader<tokio::io::DuplexStream>,
        mpsc::UnboundedSender<CallOutcome>,
        Outcomes,
    ) {
        let (client, server) = tokio::io::duplex(1 << 16);
        let writer = BatchWriter::new(client);
        let calls = FastCalls::new(writer.handle(), timeout);
        let (tx, rx) = mpsc::unbounded_channel();
        (calls, writer, BufReader::new(server), tx, rx)
    }

    fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        v.as_object().unwrap().clone()
    }

    async fn next_request(r: &mut BufReader<tokio::io::DuplexStream>) -> serde_json::Value {
        let mut line = String::new();
        r.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap()
    }

    #[tokio::test]
    async fn a_call_writes_a_request_and_its_answer_is_claimed() {
        let (calls, _w, mut server, tx, mut rx) = setup(None);
        calls.call(
            "add",
            &args(serde_json::json!({"a": 1, "b": "\u{202e}x"})),
            waiter(&tx),
        );
        let req = next_request(&mut server).await;
        assert_eq!(
            req,
            serde_json::json!({"jsonrpc": "2.0", "id": "am-1", "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": "\u{202e}x"}}})
        );
        assert_eq!(calls.in_flight(), 1);
        // Not ours: rmcp's numeric ids, requests from the server, other strings.
        assert!(!calls.claim(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#));
        assert!(!calls.claim(br#"{"jsonrpc":"2.0","id":"zz-1","result":{"note":"am-1"}}"#));
        // A request from the server is taken (and answered), whatever its id.
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-1","method":"ping"}"#));
        assert_eq!(calls.in_flight(), 1);
        assert!(!calls.claim(br#"{"jsonrpc":"2.0","id":"zz-1","result":{"note":"am-1"}}"#));
        let answer =
            br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"3"}]},"id":"am-1"}"#;
        assert!(calls.claim(answer));
        match rx.recv().await.unwrap() {
            CallOutcome::Done(r) => assert_eq!(r.content[0].as_text().unwrap().text, "3"),
            other => panic!("{other:?}"),
        }
        // A second answer for the same id finds no waiter and is dropped.
        assert!(calls.claim(answer));
        assert_eq!(calls.in_flight(), 0);
    }

    #[tokio::test]
    async fn error_and_malformed_answers_fail_the_call() {
        let (calls, _w, mut server, tx, mut rx) = setup(None);
        for _ in 0..3 {
            calls.call("t", &Default::default(), waiter(&tx));
        }
        for _ in 0..3 {
            next_request(&mut server).await;
        }
        assert!(calls.claim(
            br#"{"jsonrpc":"2.0","id":"am-1","error":{"code":-32602,"message":"bad args"}}"#
        ));
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-2","result":{"content":"not a list"}}"#));
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-3"}"#));
        let texts: Vec<String> = (0..3)
            .map(|_| match rx.try_recv().unwrap() {
                CallOutcome::Failed(t) => t,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts[0], "bad args (code -32602)");
        assert!(
            texts[1].contains("not a valid tools/call result"),
            "{}",
            texts[1]
        );
        assert!(
            texts[2].contains("neither a result nor an error"),
            "{}",
            texts[2]
        );
    }

    #[tokio::test]
    async fn a_cancelled_call_tells_the_server_and_ignores_its_answer() {
        let (calls, _w, mut server, tx, mut rx) = setup(Some(Duration::from_secs(60)));
        let first = calls.call("slow", &Default::default(), waiter(&tx));
        let second = calls.call("slow", &Default::default(), waiter(&tx));
        assert_eq!((first, second), (1, 2));
        next_request(&mut server).await;
        next_request(&mut server).await;
        assert!(calls.cancel(first, "gave up \"now\""));
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::Cancelled));
        assert_eq!(
            next_request(&mut server).await,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "am-1", "reason": "gave up \"now\""}})
        );
        // Once only; its late answer finds no waiter; the other call is untouched.
        assert!(!calls.cancel(first, "again"));
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-1","result":{"content":[]}}"#));
        assert!(rx.try_recv().is_err());
        assert_eq!(calls.in_flight(), 1);
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-2","result":{"content":[]}}"#));
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::Done(_)));
        // A settled call is not cancelled, and nothing more is sent.
        assert!(!calls.cancel(second, "late"));
        calls.call("next", &Default::default(), waiter(&tx));
        assert_eq!(next_request(&mut server).await["id"], "am-3");
    }

    #[test]
    fn unknown_content_blocks_are_named_not_fatal() {
        let r = with_unknown_blocks_named(
            r#"{"content":[{"type":"text","text":"kept"},{"type":"video","uri":"x"},{"no":"type"}]}"#,
        )
        .unwrap();
        let texts: Vec<String> = r
            .content
            .iter()
            .filter_map(|c| match c {
                rmcp::model::ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            texts,
            [
                "kept",
                "[unsupported content block: video]",
                "[unsupported content block: without a type]"
            ]
        );
        // Other faults still fail the call.
        assert!(with_unknown_blocks_named(r#"{"content":"not a list"}"#).is_none());
        assert!(with_unknown_blocks_named(
            r#"{"content":[{"type":"text","text":1},{"type":"video"}]}"#
        )
        .is_none());
        // Nothing unknown: nothing to rescue.
        assert!(with_unknown_blocks_named(r#"{"content":[{"type":"text","text":1}]}"#).is_none());
    }

    #[tokio::test]
    async fn a_garbled_answer_naming_our_call_fails_it_at_once() {
        let (calls, _w, _server, tx, mut rx) = setup(None);
        calls.call("t", &Default::default(), waiter(&tx));
        // Not JSON, and not ours: dropped, never handed to rmcp.
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"zz-1","result":{"#));
        assert!(calls.in_flight() == 1);
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-1","result":{"content":[{"type""#));
        match rx.try_recv().unwrap() {
            CallOutcome::Failed(t) => assert!(
                t.starts_with("the server's answer is not valid JSON"),
                "{t}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn calls_time_out_one_by_one_and_late_answers_are_dropped() {
        let (calls, _w, mut server, tx, mut rx) = setup(Some(Duration::from_millis(60)));
        calls.call("slow", &Default::default(), waiter(&tx));
        tokio::time::sleep(Duration::from_millis(30)).await;
        calls.call("slow", &Default::default(), waiter(&tx));
        let started = Instant::now();
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::TimedOut));
        assert_eq!(calls.in_flight(), 1);
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(20));
        assert!(calls.claim(br#"{"jsonrpc":"2.0","id":"am-1","result":{"content":[]}}"#));
        assert!(rx.try_recv().is_err());
        // The server heard of both requests, then of their cancellation.
        let sent: Vec<serde_json::Value> = [
            next_request(&mut server).await,
            next_request(&mut server).await,
            next_request(&mut server).await,
            next_request(&mut server).await,
        ]
        .into();
        assert_eq!(sent[0]["id"], "am-1");
        assert_eq!(sent[1]["id"], "am-2");
        for (n, c) in sent[2..].iter().enumerate() {
            assert_eq!(c["method"], "notifications/cancelled");
            assert_eq!(c["params"]["requestId"], format!("am-{}", n + 1));
            assert!(c.get("id").is_none());
        }
    }

    #[tokio::test]
    async fn the_end_of_the_session_answers_every_call_now_and_later() {
        let (calls, _w, _server, tx, mut rx) = setup(Some(Duration::from_secs(30)));
        calls.call("a", &Default::default(), waiter(&tx));
        calls.call("b", &Default::default(), waiter(&tx));
        calls.server_gone();
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::ServerGone));
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::ServerGone));
        calls.call("c", &Default::default(), waiter(&tx));
        assert!(matches!(rx.try_recv().unwrap(), CallOutcome::ServerGone));
        // Closed first stays closed.
        let (calls, _w, _server, tx, mut rx) = setup(None);
        calls.call("a", &Default::default(), waiter(&tx));
        calls.close();
        calls.server_gone();
        assert!(matches!(rx.try_recv().unwrap(), CallOutcome::Closed));
        calls.call("b", &Default::default(), waiter(&tx));
        assert!(matches!(rx.try_recv().unwrap(), CallOutcome::Closed));
    }

    #[tokio::test]
    async fn a_broken_pipe_fails_the_call_at_once() {
        let (calls, w, server, tx, mut rx) = setup(None);
        drop(server);
        drop(w);
        calls.call("a", &Default::default(), waiter(&tx));
        match rx.try_recv().unwrap() {
            CallOutcome::Failed(t) => assert!(t.starts_with("could not send the request"), "{t}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(calls.in_flight(), 0);
    }

    #[tokio::test]
    async fn the_reader_routes_answers_and_reports_the_end_of_output() {
        let (calls, _w, _server, tx, mut rx) = setup(None);
        for _ in 0..2 {
            calls.call("t", &Default::default(), waiter(&tx));
        }
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"am-2\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
            "x".repeat(5000)
        );
        let input = format!(
            "{}\n{}\nnoise\n{}",
            r#"{"jsonrpc":"2.0","id":"am-1","result":{"content":[{"type":"text","text":"ok"}]}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            big
        );
        let mut guard = LineGuard::with_limit(std::io::Cursor::new(input.into_bytes()), 1000);
        guard.set_fast(calls.clone());
        let mut passed = String::new();
        guard.read_to_string(&mut passed).await.unwrap();
        // Only rmcp's line reaches rmcp.
        assert_eq!(passed, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
        assert!(matches!(rx.recv().await.unwrap(), CallOutcome::Done(_)));
        match rx.recv().await.unwrap() {
            CallOutcome::Failed(t) => assert!(t.contains("larger than 1000 bytes"), "{t}"),
            other => panic!("{other:?}"),
        }
        // End of output: later calls are answered at once.
        calls.call("t", &Default::default(), waiter(&tx));
        assert!(matches!(rx.try_recv().unwrap(), CallOutcome::ServerGone));
    }

    /// The server's side of the pipe as lines, for as long as they keep coming.
    async fn lines_within(
        r: &mut BufReader<tokio::io::DuplexStream>,
        wait: Duration,
    ) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let mut line = String::new();
            match tokio::time::timeout(wait, r.read_line(&mut line)).await {
                Ok(Ok(n)) if n > 0 => out.push(line),
                _ => return out,
            }
        }
    }

    #[tokio::test]
    async fn the_servers_own_requests_are_answered_here_and_its_notifications_dropped() {
        let (calls, _w, mut server, _tx, _rx) = setup(None);
        let from_server = [
            r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":42,"method":"sampling/createMessage","params":{"messages":[]}}"#,
            r#"{"jsonrpc":"2.0","id":-3,"method":"roots/list"}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"bad\u202ename\u0007"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
            // Ids that cannot be answered: null, an object, one too long.
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
                "i".repeat(300)
            ),
            r#"{"jsonrpc":"2.0","id":6,"method":7}"#,
        ];
        let input = from_server.join("\n") + "\n";
        let mut guard = LineGuard::new(std::io::Cursor::new(input.into_bytes()));
        guard.set_fast(calls.clone());
        let mut passed = String::new();
        guard.read_to_string(&mut passed).await.unwrap();
        assert_eq!(
            passed, "",
            "nothing the server sent on its own reaches rmcp"
        );
        let replies: Vec<serde_json::Value> = lines_within(&mut server, Duration::from_millis(300))
            .await
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let not_found = |id: serde_json::Value, what: &str| {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                "message": format!("Method not found: this client answers only ping, not {what}")}})
        };
        assert_eq!(
            replies,
            vec![
                serde_json::json!({"jsonrpc": "2.0", "id": "p1", "result": {}}),
                not_found(42.into(), "sampling/createMessage"),
                not_found((-3).into(), "roots/list"),
                not_found(5.into(), "badname"),
                serde_json::json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32600,
                    "message": "Invalid Request: the method is not a string"}}),
            ]
        );
    }

    #[tokio::test]
    async fn only_well_formed_answers_to_rmcps_requests_reach_rmcp() {
        let (calls, _w, mut server, _tx, _rx) = setup(None);
        for passed in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":"r-7","error":{"code":-1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":null,"result":{}}"#,
        ] {
            assert!(!calls.claim(passed.as_bytes()), "{passed}");
        }
        for dropped in [
            r#"not json"#,
            r#"{"x":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            r#"[1,{}]"#,
            r#"  ["p1",null,{"code":1,"message":"m"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":true,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":4}"#,
            // An escaped key is still a method: a ping, answered here.
            r#"{"jsonrpc":"2.0","id":"e1","\u006dethod":"ping"}"#,
        ] {
            assert!(calls.claim(dropped.as_bytes()), "{dropped}");
        }
        let replies = lines_within(&mut server, Duration::from_millis(300)).await;
        assert_eq!(
            replies,
            ["{\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"result\":{}}\n"]
        );
    }

    #[tokio::test]
    async fn replies_to_a_server_that_does_not_read_are_dropped_not_buffered() {
        // The pipe to the server holds 64 KiB; nobody reads the server's side for now. The
        // server's output stays open after the flood (an EOF would end the session).
        let (calls, w, server, tx, mut rx) = setup(None);
        let ping =
            r#"{"jsonrpc":"2.0","id":"a-long-enough-request-id-0000000000","method":"ping"}"#;
        let input = format!("{ping}\n").repeat(100_000);
        let (_keep_open, silent) = tokio::io::duplex(1);
        let output = std::io::Cursor::new(input.into_bytes()).chain(silent);
        let mut guard = LineGuard::new(output);
        guard.set_fast(calls.clone());
        let mut buf = vec![0u8; 1 << 16];
        // The whole flood is taken in the first read, which then waits for more.
        while let Ok(n) =
            tokio::time::timeout(Duration::from_millis(300), guard.read(&mut buf)).await
        {
            assert_eq!(n.unwrap(), 0, "nothing reaches rmcp");
        }
        // A call still gets through: calls have a larger allowance than replies.
        calls.call("t", &Default::default(), waiter(&tx));
        assert!(rx.try_recv().is_err(), "the call was written, not failed");
        // Now the server reads: it gets what was kept (the pipe's 64 KiB, the writer task's
        // batch and the 1 MiB backlog: about 30,000 replies), not 100,000 replies (7.6 MB),
        // and then the call.
        let mut server = server;
        let got = lines_within(&mut server, Duration::from_millis(500)).await;
        let (last, replies) = got.split_last().unwrap();
        assert!(last.contains("\"method\":\"tools/call\""), "{last}");
        assert!(replies.iter().all(|l| l.contains("\"result\":{}")));
        let kept = replies.len();
        assert!((10_000..40_000).contains(&kept), "{kept} replies were kept");
        drop(w);
    }
}
