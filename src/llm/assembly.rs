//! A reply put together from stream events: text as it arrives, and tool calls whose id and
//! name come first and whose arguments come in pieces, keyed by the index the provider gives
//! each call (OpenAI's `tool_calls[].index`, Anthropic's content block index, Gemini's part
//! order), and the provider's reasoning blocks (Anthropic's `thinking`, whose text and
//! signature arrive as deltas), kept in block order for the next turn.

use super::{reasoning, tool_call, Reply};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
struct Partial {
    id: String,
    name: String,
    arguments: String,
    /// Gemini's `thoughtSignature` for the call, handed back with it on the next turn.
    signature: Option<Value>,
}

#[derive(Debug, Default)]
pub(super) struct Assembly {
    pub text: String,
    calls: BTreeMap<u64, Partial>,
    pub usage: Option<Map<String, Value>>,
    pub finish_reason: Option<String>,
    pub model: String,
    pub extra: Map<String, Value>,
    /// Reasoning blocks by block index, and the provider that sent them.
    reasoning: BTreeMap<u64, Value>,
    reasoning_provider: &'static str,
    /// Each block's place in a reasoning layout, by block index.
    layout: BTreeMap<u64, &'static str>,
}

impl Assembly {
    /// Adds a piece of text (and hands it on as a delta unless it is empty).
    pub fn text(&mut self, piece: &str, deltas: &mut Vec<String>) {
        if !piece.is_empty() {
            self.text.push_str(piece);
            deltas.push(piece.to_string());
        }
    }

    /// Sets what is known of call `index` (an empty id or name leaves the one seen before).
    pub fn call(&mut self, index: u64, id: &str, name: &str) {
        let call = self.calls.entry(index).or_default();
        if !id.is_empty() {
            call.id = id.to_string();
        }
        if !name.is_empty() {
            call.name.push_str(name);
        }
    }

    /// Appends a piece of call `index`'s arguments.
    pub fn arguments(&mut self, index: u64, piece: &str) {
        self.calls
            .entry(index)
            .or_default()
            .arguments
            .push_str(piece);
    }

    /// Keeps a Gemini `thoughtSignature` with call `index`.
    pub fn signature(&mut self, index: u64, signature: Value) {
        self.calls.entry(index).or_default().signature = Some(signature);
    }

    /// Starts reasoning block `index` of `provider` as its start event gave it.
    pub fn reasoning(&mut self, index: u64, provider: &'static str, block: Value) {
        self.reasoning_provider = provider;
        self.reasoning.insert(index, block);
    }

    /// Notes block `index`'s place in the reply (a [`reasoning`] layout entry).
    pub fn layout(&mut self, index: u64, entry: &'static str) {
        self.layout.insert(index, entry);
    }

    /// Appends a piece to string field `key` of reasoning block `index`.
    pub fn reasoning_text(&mut self, index: u64, key: &str, piece: &str) {
        let Some(Value::Object(block)) = self.reasoning.get_mut(&index) else {
            return; // a delta for a block never started: nothing to add it to
        };
        match block.get_mut(key) {
            Some(Value::String(s)) => s.push_str(piece),
            _ => {
                block.insert(key.into(), Value::String(piece.into()));
            }
        }
    }

    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    pub fn call_count(&self) -> usize {
        self.calls.len()
    }

    /// The finished reply. Calls without an id get `call_<n>`; calls with no argument text get
    /// `{}`.
    pub fn finish(mut self) -> Reply {
        let blocks = std::mem::take(&mut self.reasoning).into_values().collect();
        let layout = std::mem::take(&mut self.layout).into_values().collect();
        reasoning::keep(&mut self.extra, self.reasoning_provider, blocks, layout);
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(n, (_, c))| {
                let id = if c.id.is_empty() {
                    format!("call_{n}")
                } else {
                    c.id
                };
                let args = if c.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    c.arguments
                };
                let mut call = tool_call(&id, &c.name, args);
                if let Some(sig) = c.signature {
                    call["extra_content"] =
                        serde_json::json!({"google": {"thought_signature": sig}});
                }
                call
            })
            .collect();
        Reply {
            content: self.text,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            model: self.model,
            extra: self.extra,
            raw: Value::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_come_out_in_index_order_with_their_pieces_joined() {
        let mut a = Assembly::default();
        let mut deltas = Vec::new();
        a.call(1, "b", "second");
        a.call(0, "a", "first");
        a.arguments(0, "{\"x\":");
        a.arguments(1, "{}");
        a.arguments(0, " 1}");
        a.text("hi", &mut deltas);
        a.text("", &mut deltas);
        a.call(2, "", "third");
        let reply = a.finish();
        assert_eq!(deltas, vec!["hi"]);
        assert_eq!(reply.content, "hi");
        assert_eq!(
            reply.tool_calls,
            vec![
                json!({"id": "a", "type": "function", "function": {"name": "first", "arguments": "{\"x\": 1}"}}),
                json!({"id": "b", "type": "function", "function": {"name": "second", "arguments": "{}"}}),
                json!({"id": "call_2", "type": "function", "function": {"name": "third", "arguments": "{}"}}),
            ]
        );
    }
}
