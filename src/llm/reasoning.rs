//! A provider's reasoning parts kept in the neutral history: an assistant message carries them
//! as `"provider_reasoning": {"provider": "anthropic", "parts": [...]}`, each part exactly as
//! the provider sent it (Anthropic's `thinking` blocks with their `signature`, its
//! `redacted_thinking` blocks with their `data`), in the order it sent them.
//!
//! The provider that wrote them gets them back in that assistant turn (Anthropic requires its
//! thinking blocks back when the turn used tools); every other codec leaves the field out, since
//! no other wire takes them (a signature is only valid for the provider that made it). Gemini's
//! analogue, a function call's `thoughtSignature`, rides on the call itself (see `gemini.rs`).

use super::error::LlmError;
use serde_json::{json, Map, Value};

/// The assistant-message key that holds them.
pub(super) const FIELD: &str = "provider_reasoning";

/// Puts `parts` of `provider` into a reply's assistant-message fields (nothing when empty).
pub(super) fn keep(extra: &mut Map<String, Value>, provider: &str, parts: Vec<Value>) {
    if !parts.is_empty() {
        extra.insert(FIELD.into(), json!({"provider": provider, "parts": parts}));
    }
}

/// The parts message `index` keeps for `provider`: none when it keeps none or keeps another
/// provider's; a field in another shape is an error (it was not written by a codec).
pub(super) fn parts_for<'a>(
    message: &'a Value,
    index: usize,
    provider: &str,
) -> Result<&'a [Value], LlmError> {
    let Some(field) = message.get(FIELD) else {
        return Ok(&[]);
    };
    let shape = || {
        LlmError::Request(format!(
            "message {index}: {FIELD} must be {{\"provider\": <name>, \"parts\": [<objects>]}} \
             as a reply gave it, got {field}"
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
    Ok(if name == provider { parts } else { &[] })
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
        assert_eq!(parts_for(&m, 1, "anthropic").unwrap().len(), 1);
        assert!(parts_for(&m, 1, "gemini").unwrap().is_empty());
        let bad = json!({"role": "assistant", FIELD: {"provider": "anthropic", "parts": "x"}});
        let err = parts_for(&bad, 4, "anthropic").unwrap_err().to_string();
        assert!(
            err.contains("message 4: provider_reasoning must be"),
            "{err}"
        );
        let stripped = without(std::slice::from_ref(&m));
        assert_eq!(stripped[0], json!({"role": "assistant"}));
        let plain = [json!({"role": "user", "content": "x"})];
        assert!(matches!(without(&plain), std::borrow::Cow::Borrowed(_)));
    }
}
