//! What a server's message may hold before rmcp parses it, and how a faulty one is read.
//!
//! rmcp builds every message it receives whole, through untagged enums, and drops what it
//! cannot type. A hostile or sloppy server could make that cost hundreds of megabytes (a
//! 15 MB array of zeros), or leave a call waiting for its timeout (an answer rmcp refuses).
//! Every transport (the stdio reader, the HTTP event stream and JSON body) passes each message
//! through [`bounded_message`] first: lone surrogate escapes become U+FFFD, and a message over
//! [`MAX_ANSWER_VALUES`] is cut before rmcp sees it. Content blocks of a kind rmcp does not
//! know are named instead of failing the call ([`unknown_blocks_named`]).

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// Longest request id of the server's that is answered or copied (its JSON text).
pub const MAX_SERVER_ID_BYTES: usize = 256;

/// The one key of the `structuredContent` put in place of one left out unread (see
/// [`bounded_message`]); [`call_remote`](super::client) turns it into `{"truncated": true}` data.
pub const UNREAD_KEY: &str = "agentmaker/unread";

/// JSON values (object keys count too) a `tools/call` answer may hold. Parsing builds a tree
/// of some 50 bytes per value, so 15 MB of `[0,0,...]` cost 400 MB of memory; beyond this
/// the structured content is left out unread, and if the rest is still over, the call fails.
/// Answers under [`COUNT_FROM_BYTES`] are not counted: they cannot come near it.
pub const MAX_ANSWER_VALUES: usize = 250_000;
const COUNT_FROM_BYTES: usize = 256 * 1024;

/// JSON text `raw` with every `\uXXXX` escape of a surrogate that is not half of a pair
/// replaced by `\ufffd`; `None` when there is none (found by a byte search first, so a message
/// without `\ud`/`\uD` costs two scans).
fn surrogates_repaired(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    if memchr::memmem::find(b, b"\\ud").is_none() && memchr::memmem::find(b, b"\\uD").is_none() {
        return None;
    }
    let escape_at = |at: usize| -> Option<u32> {
        let digits = b.get(at..at + 6)?.strip_prefix(b"\\u")?;
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
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

/// Whether JSON text `raw` holds more than [`MAX_ANSWER_VALUES`] values.
pub fn over_value_budget(raw: &[u8]) -> bool {
    raw.len() >= COUNT_FROM_BYTES && count_values(raw, MAX_ANSWER_VALUES) > MAX_ANSWER_VALUES
}

/// The JSON-RPC error answer to request `id` (its JSON text), as one message without a
/// newline: every error this client puts in the server's place or sends it is worded here.
pub fn error_answer(id: &str, code: i64, message: &str) -> String {
    let error = serde_json::json!({"code": code, "message": message});
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}")
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
                let Some(end) = closing_quote(raw, i + 1) else {
                    return n;
                };
                i = end;
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

/// Where the string whose text starts at `from` ends (its closing quote: one not escaped by an
/// odd run of backslashes), skipped with `memchr`; `None` for a string left unterminated (text
/// that is not JSON, say an SSE event looked at before anything parses it, may even end in a
/// backslash).
fn closing_quote(raw: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let rest = raw.get(from..)?;
        match memchr::memchr2(b'"', b'\\', rest)? {
            k if rest[k] == b'\\' => from += k + 2,
            k => return Some(from + k),
        }
    }
}

/// Whether JSON text `raw` nests deeper than `max` arrays and objects (strings skipped with
/// `memchr`).
pub fn nests_deeper_than(raw: &[u8], max: usize) -> bool {
    let (mut depth, mut i) = (0usize, 0);
    while i < raw.len() {
        match raw[i] {
            b'"' => match closing_quote(raw, i + 1) {
                Some(end) => i = end,
                None => return false,
            },
            b'[' | b'{' if depth == max => return true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
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
    #[serde(borrow, default)]
    pub jsonrpc: Option<&'a RawValue>,
}

/// The content block kinds of rmcp's `ContentBlock` (MCP 2025-06).
const KNOWN_BLOCKS: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];

/// A result whose only fault is content blocks of kinds this client does not know (a later
/// protocol's, or a server's own): each such block becomes a text line naming its type, so the
/// rest of the answer is not lost. `None` when the result is wrong in other ways too, or is a
/// listing (it has `tools`). rmcp keeps a result it could not type as a `CustomResult` value,
/// which is what this is given.
pub fn unknown_blocks_named(value: &mut serde_json::Value) -> Option<CallToolResult> {
    if value.get("tools").is_some() {
        return None;
    }
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

/// A message's bytes as text, those that are not UTF-8 as U+FFFD (over stdio and HTTP alike).
pub(super) fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Whether a JSON value's text (already parsed, so valid) is a string or a number: the ids
/// JSON-RPC allows.
pub fn is_string_or_number(raw: &str) -> bool {
    raw.bytes()
        .next()
        .is_some_and(|b| b == b'"' || b == b'-' || b.is_ascii_digit())
}

/// A message from the server made safe for rmcp to parse (see the module documentation). One
/// over the budget is replaced: an answer keeps its result less the structured content
/// ([`UNREAD_KEY`] in its place), or if that is still too much becomes an error answer to its
/// request; anything else becomes a notification of ours, which is dropped.
pub(super) fn bounded_message(data: String) -> String {
    // serde refuses half a surrogate pair written as an escape (Python's json.dumps writes one).
    let data = surrogates_repaired(&data).unwrap_or(data);
    if !over_value_budget(data.as_bytes()) {
        return data;
    }
    match serde_json::from_str::<Envelope<'_>>(&data) {
        // Only an id that is a short string or number is copied into the rebuilt answer: an
        // id of a million values would otherwise reach rmcp whole.
        Ok(Envelope {
            id: Some(id),
            method: None,
            result,
            ..
        }) if id.get().len() <= MAX_SERVER_ID_BYTES && is_string_or_number(id.get()) => {
            let id = id.get();
            // The result less its structured content, its members as raw text.
            let marker = RawValue::from_string(format!(r#"{{"{UNREAD_KEY}":true}}"#)).ok();
            let rest = result
                .and_then(|r| serde_json::from_str::<BTreeMap<String, &RawValue>>(r.get()).ok())
                .map(|mut members| {
                    members.remove("structuredContent");
                    members.extend(marker.as_deref().map(|m| ("structuredContent".into(), m)));
                    serde_json::to_string(&members).unwrap_or_default()
                });
            match rest {
                Some(rest) if !over_value_budget(rest.as_bytes()) => {
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{rest}}}"#)
                }
                // An error answer too large to read is worded the same way.
                _ => error_answer(id, -32603, &too_many_values()),
            }
        }
        _ => r#"{"jsonrpc":"2.0","method":"notifications/agentmaker/dropped"}"#.to_string(),
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
        let repaired = bounded_message(raw.to_owned());
        let r: CallToolResult = serde_json::from_str(&repaired).unwrap();
        assert_eq!(
            r.content[0].as_text().unwrap().text,
            "a\u{fffd}b \u{fffd} \u{1f600} \\ud800 \u{e9}"
        );
        assert_eq!(surrogates_repaired(r#"{"t":"\ud83d\ude00 ok"}"#), None);
        assert_eq!(
            surrogates_repaired(r#"["\ud800"]"#).as_deref(),
            Some(r#"["\ufffd"]"#)
        );
        // Cut short: no panic.
        assert_eq!(surrogates_repaired(r#""\ud8"#), None);
        // Found by a byte search first.
        assert_eq!(surrogates_repaired(r#"{"d":"plain"}"#), None);
        assert_eq!(surrogates_repaired(r#"{"d":"\uD83D\uDE00"}"#), None);
        assert_eq!(
            surrogates_repaired(r#"{"d":"x\uDC00"}"#).as_deref(),
            Some(r#"{"d":"x\ufffd"}"#)
        );
    }

    #[test]
    fn a_message_of_millions_of_values_is_cut_before_it_is_parsed() {
        let zeros = vec!["0"; 400_000].join(",");
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"structuredContent":{{"v":[{zeros}]}},"content":[{{"type":"text","text":"kept"}}]}}}}"#
        );
        let cut: serde_json::Value = serde_json::from_str(&bounded_message(answer)).unwrap();
        assert_eq!(cut["id"], 7);
        assert_eq!(cut["result"]["content"][0]["text"], "kept");
        assert_eq!(
            cut["result"]["structuredContent"],
            serde_json::json!({UNREAD_KEY: true})
        );
        let blocks = vec![r#"{"type":"text","text":""}"#; 100_000].join(",");
        let answer = format!(r#"{{"jsonrpc":"2.0","id":"a","result":{{"content":[{blocks}]}}}}"#);
        let cut: serde_json::Value = serde_json::from_str(&bounded_message(answer)).unwrap();
        assert_eq!(cut["id"], "a");
        let message = cut["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("more than 250000 JSON values"),
            "{message}"
        );
        // Not an answer: it becomes a notification of ours, dropped unread.
        let note = format!(r#"{{"jsonrpc":"2.0","method":"x","params":[{zeros}]}}"#);
        assert!(bounded_message(note).contains("notifications/agentmaker/dropped"));
        // Small messages are not counted, and pass as they are.
        let small = format!(r#"{{"id":1,"result":[{}]}}"#, vec!["0"; 1000].join(","));
        assert_eq!(bounded_message(small.clone()), small);
    }

    #[test]
    fn unknown_content_blocks_are_named_not_fatal() {
        let named = |raw: &str| unknown_blocks_named(&mut serde_json::from_str(raw).unwrap());
        let r = named(
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
        assert!(named(r#"{"content":"not a list"}"#).is_none());
        assert!(named(r#"{"content":[{"type":"text","text":1},{"type":"video"}]}"#).is_none());
        // Nothing unknown: nothing to rescue.
        assert!(named(r#"{"content":[{"type":"text","text":1}]}"#).is_none());
    }

    use super::*;
}
