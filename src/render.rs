//! Provider renderings of a tool's one root JSON Schema: OpenAI (plain and strict), Anthropic
//! and Gemini. Pure functions over `serde_json::Value`s; they never change their input.
//!
//! The registry keeps one root schema per tool (the one its validator is compiled from); every
//! provider form is derived from it here, so what a model is told and what is checked cannot
//! drift apart between providers.

mod anthropic;
mod gemini;
mod openai;
pub(crate) mod pyjson;
mod strict;

pub use anthropic::anthropic_tool;
pub use gemini::{gemini_declaration, gemini_schema};
pub use openai::{openai_tool, write_openai_tool};
pub use strict::{strict_schema, strict_tool, NotStrict};

use serde_json::{Map, Value};

/// The root schema a provider form is built from: an empty schema (`{}`, which accepts any
/// object) stands for "no parameters", since providers want `type` and `properties`.
fn effective_root(schema: &Value) -> std::borrow::Cow<'_, Value> {
    if truthy(schema) {
        std::borrow::Cow::Borrowed(schema)
    } else {
        let mut root = Map::with_capacity(2);
        root.insert("type".into(), Value::String("object".into()));
        root.insert("properties".into(), Value::Object(Map::new()));
        std::borrow::Cow::Owned(Value::Object(root))
    }
}

/// Whether a value counts as "set" where a renderer checks for one (a description, the
/// properties of a declaration): not null, false, 0, "", [] or {}.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `base (note)`-style text: `note` alone when the description is unset, else joined onto it
/// with `join` (a description that is not a string, which no valid schema has, is replaced).
fn with_note(
    description: Option<&Value>,
    note: &str,
    join: impl Fn(&str, &str) -> String,
) -> Value {
    match description {
        Some(Value::String(text)) if !text.is_empty() => Value::String(join(text, note)),
        _ => Value::String(note.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truthiness_follows_what_a_provider_would_call_unset() {
        for unset in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert!(!truthy(&unset), "{unset}");
        }
        for set in [
            json!(true),
            json!(-1),
            json!(0.5),
            json!("x"),
            json!([0]),
            json!({"a": 1}),
        ] {
            assert!(truthy(&set), "{set}");
        }
    }

    #[test]
    fn an_empty_root_stands_for_no_parameters() {
        assert_eq!(
            *effective_root(&json!({})),
            json!({"type": "object", "properties": {}})
        );
        let given = json!({"type": "object"});
        assert!(matches!(
            effective_root(&given),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
