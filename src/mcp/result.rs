//! Turning a `tools/call` result into the [`ToolResponse`] the model reads.
//!
//! Text: the text blocks, sanitized and joined with `\n`; images, audio and resources are
//! described in one bracketed line each (their kind, MIME type, size or URI) so the model knows
//! they exist; embedded text resources contribute their text. The whole text is bounded by
//! `max_result_chars` (separators count); a cut text ends in `…(truncated)` and the response
//! status is `partial`. At most [`MAX_RESULT_BLOCKS`] blocks are read.
//!
//! Data: `{"structured": <structuredContent>}` when the server sent structured content, plus
//! `"content": [...]` with the raw non-text blocks (images as base64, resources), both copied
//! only when the total fits a budget of `max(4 * max_result_chars, 1024)` bytes of JSON,
//! [`MAX_DATA_DEPTH`] levels and [`MAX_DATA_NODES`] values; otherwise data is
//! `{"truncated": true}`. The size is estimated by walking the value, never by serializing it.
//!
//! `isError: true` gives an error response whose text is the `tool.msg.mcp.error` prompt.

use super::sanitize::{sanitize, TRUNCATION_MARK};
use super::MessageKey;
use crate::prompts::Prompts;
use crate::response::{ToolResponse, ToolStatus};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};

/// Content blocks read from one result; more are counted as truncation.
pub const MAX_RESULT_BLOCKS: usize = 512;
/// Nesting bound for `data`.
pub const MAX_DATA_DEPTH: usize = 32;
/// Bound on the number of JSON values copied into `data`.
pub const MAX_DATA_NODES: usize = 4096;
/// Server-chosen labels (URIs, MIME types, names) are cut to this many characters.
const LABEL_CHARS: usize = 200;

/// Accumulates the joined text under the character budget.
#[derive(Default)]
struct TextOut {
    text: String,
    left: usize,
    truncated: bool,
    any: bool,
}

impl TextOut {
    fn push(&mut self, piece: &str) {
        if self.truncated {
            return;
        }
        if self.any {
            if self.left == 0 {
                self.truncated = true;
                return;
            }
            self.text.push('\n');
            self.left -= 1;
        }
        self.any = true;
        let s = sanitize(piece, self.left);
        self.left -= s.text.chars().count();
        self.text.push_str(&s.text);
        self.truncated = s.truncated;
    }
}

fn label(s: &str) -> String {
    let cut = sanitize(s, LABEL_CHARS);
    let more = if cut.truncated { "…" } else { "" };
    format!("{}{more}", cut.text)
}

/// Decoded size of a base64 payload, for the description line.
fn b64_bytes(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding.min(2))
}

fn media(kind: &str, mime_type: &str, data: &str) -> String {
    format!("[{kind}: {}, {} bytes]", label(mime_type), b64_bytes(data))
}

/// The line that tells the model a non-text block is there.
fn describe(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Image(i) => media("image", &i.mime_type, &i.data),
        ContentBlock::Audio(a) => media("audio", &a.mime_type, &a.data),
        ContentBlock::Resource(r) => match &r.resource {
            // The text itself is pushed separately by the caller, by reference.
            ResourceContents::TextResourceContents { uri, mime_type, .. } => {
                let mime = label(mime_type.as_deref().unwrap_or("text"));
                format!("[resource {} ({mime})]", label(uri))
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {} ({}), {} bytes of binary data]",
                label(uri),
                label(mime_type.as_deref().unwrap_or("application/octet-stream")),
                b64_bytes(blob)
            ),
            _ => "[resource of an unsupported kind]".to_string(),
        },
        ContentBlock::ResourceLink(link) => {
            let mut line = format!("[resource link {}: {}", label(&link.uri), label(&link.name));
            if let Some(m) = &link.mime_type {
                line.push_str(&format!(" ({})", label(m)));
            }
            if let Some(d) = &link.description {
                line.push_str(&format!(" - {}", label(d)));
            }
            line.push(']');
            line
        }
        // A block kind added to the protocol later: say so rather than drop it silently.
        _ => "[unsupported content block]".to_string(),
    }
}

/// Converts one result. `prompts` supplies `tool.msg.mcp.no_text` and `tool.msg.mcp.error`.
pub fn convert_result(
    result: &CallToolResult,
    max_result_chars: usize,
    prompts: &Prompts,
) -> ToolResponse {
    let mut out = TextOut {
        left: max_result_chars,
        ..TextOut::default()
    };
    let mut raw_blocks = Vec::new();
    for (i, block) in result.content.iter().enumerate() {
        if i == MAX_RESULT_BLOCKS {
            out.truncated = true;
            break;
        }
        match block {
            // Pushed by reference: a 100 MB text is scanned only up to the budget, never copied.
            ContentBlock::Text(t) if t.text.is_empty() => {}
            ContentBlock::Text(t) => out.push(&t.text),
            other => {
                out.push(&describe(other));
                if let ContentBlock::Resource(r) = other {
                    if let ResourceContents::TextResourceContents { text, .. } = &r.resource {
                        out.push(text);
                    }
                }
                raw_blocks.push(other);
            }
        }
    }
    let mut text = out.text;
    if out.truncated {
        text.push_str(TRUNCATION_MARK);
    } else if !out.any || text.is_empty() {
        text = prompts.get(MessageKey::NO_TEXT).to_string();
    }
    let data = build_data(result, &raw_blocks, max_result_chars);
    let (text, status) = if result.is_error == Some(true) {
        let text = prompts.fmt(MessageKey::ERROR, &[("text", &text)]);
        (text, ToolStatus::Error)
    } else if out.truncated {
        (text, ToolStatus::Partial)
    } else {
        (text, ToolStatus::Success)
    };
    ToolResponse { text, status, data }
}

fn build_data(
    result: &CallToolResult,
    raw_blocks: &[&ContentBlock],
    max_result_chars: usize,
) -> Option<Value> {
    if result.structured_content.is_none() && raw_blocks.is_empty() {
        return None;
    }
    let mut budget = Budget {
        bytes_left: max_result_chars.saturating_mul(4).max(1024),
        nodes_left: MAX_DATA_NODES,
    };
    let mut data = Map::new();
    if let Some(s) = &result.structured_content {
        if !budget.fits(s, 1) {
            return Some(truncated());
        }
        data.insert("structured".into(), s.clone());
    }
    if !raw_blocks.is_empty() {
        // Blocks are typed rmcp values, small apart from their payload strings, whose size
        // is checked before anything is serialized.
        let payload: usize = raw_blocks
            .iter()
            .map(|b| block_payload_len(b))
            .fold(0, usize::saturating_add);
        if payload > budget.bytes_left {
            return Some(truncated());
        }
        let mut items = Vec::with_capacity(raw_blocks.len());
        for b in raw_blocks {
            match serde_json::to_value(b) {
                Ok(v) if budget.fits(&v, 2) => items.push(v),
                _ => return Some(truncated()),
            }
        }
        data.insert("content".into(), Value::Array(items));
    }
    Some(Value::Object(data))
}

fn block_payload_len(b: &ContentBlock) -> usize {
    match b {
        ContentBlock::Text(t) => t.text.len(),
        ContentBlock::Image(i) => i.data.len(),
        ContentBlock::Audio(a) => a.data.len(),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { text, .. } => text.len(),
            ResourceContents::BlobResourceContents { blob, .. } => blob.len(),
            _ => 0,
        },
        ContentBlock::ResourceLink(l) => l.uri.len() + l.name.len(),
        _ => 0, // a kind added to the protocol later
    }
}

fn truncated() -> Value {
    serde_json::json!({"truncated": true})
}

/// Serialized-size estimate with early exit.
struct Budget {
    bytes_left: usize,
    nodes_left: usize,
}

impl Budget {
    fn take(&mut self, n: usize) -> bool {
        if n > self.bytes_left {
            return false;
        }
        self.bytes_left -= n;
        true
    }

    fn fits(&mut self, v: &Value, depth: usize) -> bool {
        if self.nodes_left == 0 {
            return false;
        }
        self.nodes_left -= 1;
        match v {
            Value::Null | Value::Bool(_) => self.take(5),
            Value::Number(_) => self.take(24),
            Value::String(s) => self.take(s.len() + 2),
            Value::Array(items) => {
                if depth > MAX_DATA_DEPTH || !self.take(2 + items.len()) {
                    return false;
                }
                items.iter().all(|i| self.fits(i, depth + 1))
            }
            Value::Object(map) => {
                if depth > MAX_DATA_DEPTH || !self.take(2) {
                    return false;
                }
                map.iter()
                    .all(|(k, val)| self.take(k.len() + 4) && self.fits(val, depth + 1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::default_prompts;
    use serde_json::json;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    fn conv(v: Value, max: usize) -> ToolResponse {
        convert_result(&result(v), max, &default_prompts(None).unwrap())
    }

    #[test]
    fn text_blocks_are_joined_and_cleaned() {
        let r = conv(
            json!({"content": [{"type": "text", "text": "a\u{202e}b"}, {"type": "text", "text": "c\r"}]}),
            100,
        );
        assert_eq!(r.text, "ab\nc");
        assert_eq!(r.status, ToolStatus::Success);
        assert_eq!(r.data, None);
    }

    #[test]
    fn long_text_is_bounded_and_partial() {
        let r = conv(
            json!({"content": [{"type": "text", "text": "x".repeat(1000)}]}),
            10,
        );
        assert_eq!(r.text, format!("{}{TRUNCATION_MARK}", "x".repeat(10)));
        assert_eq!(r.status, ToolStatus::Partial);
        let r = conv(
            json!({"content": [{"type": "text", "text": "abcd"}, {"type": "text", "text": "efgh"}]}),
            6,
        );
        assert_eq!(r.text, format!("abcd\ne{TRUNCATION_MARK}"));
    }

    #[test]
    fn images_and_resources_are_described() {
        let r = conv(
            json!({"content": [
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "inside"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "the c file"}
            ]}),
            1000,
        );
        assert_eq!(
            r.text,
            "[image: image/png, 5 bytes]\n[resource file:///a.txt (text/plain)]\ninside\n[resource file:///b.bin (application/octet-stream), 3 bytes of binary data]\n[resource link file:///c: c - the c file]"
        );
        let data = r.data.unwrap();
        assert_eq!(
            data["content"][0],
            json!({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})
        );
        assert_eq!(data["content"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn structured_content_fits_or_is_marked() {
        let r = conv(
            json!({"content": [], "structuredContent": {"n": 3, "xs": [1, 2]}}),
            100,
        );
        assert_eq!(r.data, Some(json!({"structured": {"n": 3, "xs": [1, 2]}})));
        assert_eq!(r.text, "(the tool produced no text output)");
        let r = conv(
            json!({"content": [], "structuredContent": {"s": "y".repeat(5000)}}),
            100,
        );
        assert_eq!(r.data, Some(json!({"truncated": true})));
        let mut deep = json!(1);
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let r = conv(json!({"content": [], "structuredContent": deep}), 100_000);
        assert_eq!(r.data, Some(json!({"truncated": true})));
    }

    #[test]
    fn is_error_gives_an_error_response() {
        let r = conv(
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
            100,
        );
        assert_eq!(r.status, ToolStatus::Error);
        assert_eq!(r.text, "Error: boom");
    }

    #[test]
    fn block_count_is_bounded() {
        let blocks: Vec<Value> = (0..600)
            .map(|_| json!({"type": "text", "text": "a"}))
            .collect();
        let r = conv(json!({"content": blocks}), 100_000);
        assert_eq!(r.status, ToolStatus::Partial);
        assert_eq!(
            r.text.lines().filter(|l| l.starts_with('a')).count(),
            MAX_RESULT_BLOCKS
        );
    }
}
