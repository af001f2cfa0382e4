//! A provider's reasoning parts kept in the neutral history: an assistant message carries them
//! as `"provider_reasoning": {"provider": "anthropic", "parts": [...]}`, each part exactly as
//! the provider sent it (Anthropic's `thinking` blocks with their `signature`, its
//! `redacted_thinking` blocks with their `data`), in the order it sent them.
//!
//! Where the reply had a part after its text or a tool call (Anthropic's interleaved thinking),
//! `"layout"` records the reply's order as `"reasoning"`, `"text"` and `"call"` entries, so the
//! turn goes back with every part where it was; without it, the parts come first.
//!
//! The provider that wrote them gets them back in that assistant turn (Anthropic requires its
//! thinking blocks back when the turn used tools); every other codec leaves the field out, since
//! no other wire takes them (a signature is only valid for the provider that made it). Gemini's
//! analogue, a function call's `thoughtSignature`, rides on the call itself (see `gemini.rs`).

use super::error::LlmError;
use serde_json::{json, Map, Value};

/// The assistant-message key that holds them.
pub(super) const FIELD: &str = "provider_reasoning";

/// A layout entry for a reasoning part, the reply's text, or its next tool call.
pub(super) const REASONING: &str = "reasoning";
pub(super) const TEXT: &str = "text";
pub(super) const CALL: &str = "call";

/// Puts `parts` of `provider` into a reply's assistant-message fields (nothing when empty), with
/// `layout` (the reply's blocks in order) when a part came after a text or a call.
pub(super) fn keep(
    extra: &mut Map<String, Value>,
    provider: &str,
    parts: Vec<Value>,
    layout: Vec<&'static str>,
) {
    if parts.is_empty() {
        return;
    }
    let mut kept = json!({"provider": provider, "parts": parts});
    let first_other = layout.iter().position(|k| *k != REASONING);
    let last_reasoning = layout.iter().rposition(|k| *k == REASONING);
    if let (Some(other), Some(reasoning)) = (first_other, last_reasoning) {
        if reasoning > other {
            kept["layout"] = json!(layout);
        }
    }
    extra.insert(FIELD.into(), kept);
}

/// The reasoning an assistant message keeps for one provider.
#[derive(Default)]
pub(super) struct Kept<'a> {
    pub parts: &'a [Value],
    layout: Option<Vec<&'a str>>,
}

impl Kept<'_> {
    /// The turn's blocks: the parts, texts and calls in the reply's order (the parts first when
    /// no layout was needed).
    pub fn arrange(&self, texts: Vec<Value>, calls: Vec<Value>) -> Vec<Value> {
        let Some(layout) = &self.layout else {
            return self
                .parts
                .iter()
                .cloned()
                .chain(texts)
                .chain(calls)
                .collect();
        };
        let mut out = Vec::with_capacity(self.parts.len() + texts.len() + calls.len());
        let mut parts = self.parts.iter().cloned();
        let mut calls = calls.into_iter();
        let mut texts = Some(texts);
        for kind in layout {
            match *kind {
                REASONING => out.extend(parts.next()),
                TEXT => out.extend(texts.take().into_iter().flatten()),
                _ => out.extend(calls.next()),
            }
        }
        // What the layout has no place for (a history edited since) goes last.
        out.extend(parts.chain(texts.into_iter().flatten()).chain(calls));
        out
    }
}

/// What message `index` keeps for `provider`: nothing when it keeps nothing or keeps another
/// provider's; a field in another shape is an error (it was not written by a codec).
pub(super) fn parts_for<'a>(
    message: &'a Value,
    index: usize,
    provider: &str,
) -> Result<Kept<'a>, LlmError> {
    let Some(field) = message.get(FIELD) else {
        return Ok(Kept::default());
    };
    let shape = || {
        LlmError::Request(format!(
            "message {index}: {FIELD} must be {{\"provider\": <name>, \"parts\": [<objects>]}} \
             (and a \"layout\" of \"reasoning\", \"text\" and \"call\" entries, one \
             \"reasoning\" per part) as a reply gave it, got {field}"
        ))
    };
    let name = field
        .get("provider")
        .and_then(Value::as_str)
        .ok_or_else(shape)?;
    let parts = match field.get("parts") {
        Some(Value::Array(parts)) if parts.iter().all(Value::is_object) => parts,
        _ => return Err(shape()),
    };
    let layout = match field.get("layout") {
        None => None,
        Some(Value::Array(entries)) => {
            let kinds: Option<Vec<&str>> = entries
                .iter()
                .map(|e| e.as_str().filter(|k| [REASONING, TEXT, CALL].contains(k)))
                .collect();
            let kinds = kinds.ok_or_else(shape)?;
            if kinds.iter().filter(|k| **k == REASONING).count() != parts.len() {
                return Err(shape());
            }
            Some(kinds)
        }
        Some(_) => return Err(shape()),
    };
    if name != provider {
        return Ok(Kept::default());
    }
    Ok(Kept { parts, layout })
}

/// `messages` without the field, for a wire that has no place for it (OpenAI's). Borrowed
/// when no message carries it.
pub(super) fn without(messages: &[Value]) -> std::borrow::Cow<'_, [Value]> {
    if !messages.iter().any(|m| m.get(FIELD).is_some()) {
        return std::borrow::Cow::Borrowed(messages);
    }
    let stripped = messages
        .iter()
        .map(|m| match m {
            Value::Object(o) if o.contains_key(FIELD) => {
                let mut o = o.clone();
                o.remove(FIELD);
                Value::Object(o)
            }
            other => other.clone(),
        })
        .collect();
    std::borrow::Cow::Owned(stripped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_go_to_their_own_provider_only_and_bad_shapes_are_errors() {
        let m = json!({"role": "assistant", FIELD: {"provider": "anthropic",
            "parts": [{"type": "thinking", "thinking": "t", "signature": "s"}]}});
        assert_eq!(parts_for(&m, 1, "anthropic").unwrap().parts.len(), 1);
        assert!(parts_for(&m, 1, "gemini").unwrap().parts.is_empty());
        let bad = json!({"role": "assistant", FIELD: {"provider": "anthropic", "parts": "x"}});
        let err = parts_for(&bad, 4, "anthropic").err().unwrap().to_string();
        assert!(
            err.contains("message 4: provider_reasoning must be"),
            "{err}"
        );
        let mut short = m.clone();
        short[FIELD]["layout"] = json!(["call", "text"]);
        assert!(parts_for(&short, 0, "anthropic").is_err());
        let mut odd = m.clone();
        odd[FIELD]["layout"] = json!(["reasoning", "image"]);
        assert!(parts_for(&odd, 0, "anthropic").is_err());
        let stripped = without(std::slice::from_ref(&m));
        assert_eq!(stripped[0], json!({"role": "assistant"}));
        let plain = [json!({"role": "user", "content": "x"})];
        assert!(matches!(without(&plain), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn a_layout_is_kept_only_when_a_part_came_after_text_or_a_call_and_restores_that_order() {
        let part = |n: u8| json!({"type": "thinking", "thinking": n.to_string(), "signature": "s"});
        let mut extra = Map::new();
        keep(
            &mut extra,
            "anthropic",
            vec![part(1)],
            vec![REASONING, TEXT, CALL],
        );
        assert!(extra[FIELD].get("layout").is_none());
        let layout = vec![REASONING, TEXT, CALL, REASONING, CALL];
        keep(&mut extra, "anthropic", vec![part(1), part(2)], layout);
        assert_eq!(
            extra[FIELD]["layout"],
            json!(["reasoning", "text", "call", "reasoning", "call"])
        );
        let message = json!({"role": "assistant", FIELD: extra[FIELD].clone()});
        let kept = parts_for(&message, 0, "anthropic").unwrap();
        let blocks = kept.arrange(vec![json!("T")], vec![json!("C1"), json!("C2")]);
        assert_eq!(
            blocks,
            vec![part(1), json!("T"), json!("C1"), part(2), json!("C2")]
        );
        let extra_call = kept.arrange(vec![], vec![json!("C1"), json!("C2"), json!("C3")]);
        assert_eq!(extra_call.last(), Some(&json!("C3")));
    }
}
