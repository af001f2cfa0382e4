//! Preparing a remote tool's `inputSchema` before anything uses it.
//!
//! The prepared schema is what the model is shown and what arguments are validated against
//! locally (the registry compiles it once at registration); preparing it here also compiles it,
//! so a schema the validator would reject fails `load_tools`, naming the tool.

use super::sanitize::{is_removed, sanitize_marked};
use serde_json::{Map, Value};

/// Serialized size bound, counted while walking (no serializer runs on unchecked input).
pub const MAX_SCHEMA_BYTES: usize = 128 * 1024;
/// Nesting bound: objects and arrays, the root being depth 1.
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// Bound on the number of JSON values (objects, arrays and scalars) in one schema.
pub const MAX_SCHEMA_NODES: usize = 4096;
/// Bound on property definitions summed over every `properties` object.
pub const MAX_SCHEMA_PROPERTIES: usize = 512;

/// Keywords whose string value is a reference that a validator would resolve.
const REF_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Keywords whose value maps names (not keywords) to subschemas.
const NAME_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Why a schema was refused; the text is shown after `tool '...' has an unusable inputSchema: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("it must be a JSON object, got {kind}")]
    NotAnObject { kind: &'static str },
    #[error("it is larger than {MAX_SCHEMA_BYTES} bytes")]
    TooLarge,
    #[error("it nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep,
    #[error("it has more than {MAX_SCHEMA_NODES} nodes")]
    TooManyNodes,
    #[error("it defines more than {MAX_SCHEMA_PROPERTIES} properties")]
    TooManyProperties,
    #[error("{keyword} must be a local reference starting with '#', got {value}")]
    NonLocalRef {
        keyword: &'static str,
        value: String,
    },
    #[error("\"properties\" must be an object")]
    PropertiesNotObject,
    #[error("the root type must be \"object\", got {got}")]
    RootNotObject { got: String },
    #[error("\"required\" must be a list of property names")]
    BadRequired,
    #[error("it is not a valid JSON Schema: {reason}")]
    Invalid { reason: String },
    #[error(
        "a property name, enum value or other string in it carries control or invisible \
         formatting characters (only descriptions and titles are cleaned): {text}"
    )]
    HiddenCharacters { text: String },
}

/// Keys whose string value is prose for the model: cleaned and cut, never refused.
const PROSE_KEYS: [&str; 3] = ["description", "title", "$comment"];

/// Refuses a string the model would see verbatim (a property name, an enum value, a default)
/// that carries characters [`sanitize_marked`] removes elsewhere: cleaning it would change
/// what the server expects, and keeping it would show the model hidden text.
fn visible(text: &str) -> Result<(), SchemaError> {
    if !text.chars().any(is_removed) {
        return Ok(());
    }
    let mut shown = format!("{:?}", text.chars().take(60).collect::<String>());
    if text.chars().count() > 60 {
        shown.push('…');
    }
    Err(SchemaError::HiddenCharacters { text: shown })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks the bounds and reference rules on `schema` and returns the copy the model will see:
/// every string under a `description` or `title` key sanitized and cut to `max_desc_chars`,
/// and `"type": "object"` / `"properties": {}` added at the root when missing.
pub fn prepare_input_schema(schema: &Value, max_desc_chars: usize) -> Result<Value, SchemaError> {
    let Value::Object(_) = schema else {
        return Err(SchemaError::NotAnObject { kind: kind(schema) });
    };
    let mut walk = Walk {
        max_desc_chars,
        ..Walk::default()
    };
    let mut prepared = walk.copy(schema, 1, "")?;
    let Value::Object(root) = &mut prepared else {
        return Err(SchemaError::NotAnObject { kind: kind(schema) });
    };
    let root_type = root.entry("type").or_insert_with(|| "object".into());
    if *root_type != "object" {
        let got = preview(root_type, 80);
        return Err(SchemaError::RootNotObject { got });
    }
    root.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(req) = root.get("required") {
        if !matches!(req, Value::Array(names) if names.iter().all(Value::is_string)) {
            return Err(SchemaError::BadRequired);
        }
    }
    if let Err(reason) = crate::validation::SchemaValidator::compile(&prepared) {
        let first_line = reason.lines().next().unwrap_or("");
        let reason = first_line.chars().take(300).collect();
        return Err(SchemaError::Invalid { reason });
    }
    Ok(prepared)
}

/// A value as JSON text, cut after `max` characters once it is longer than `max` bytes.
fn preview(value: &Value, max: usize) -> String {
    let text = value.to_string();
    if text.len() <= max {
        return text;
    }
    format!("{}…", text.chars().take(max).collect::<String>())
}

#[derive(Default)]
struct Walk {
    bytes: usize,
    nodes: usize,
    properties: usize,
    max_desc_chars: usize,
}

impl Walk {
    fn add_bytes(&mut self, n: usize) -> Result<(), SchemaError> {
        self.bytes = self.bytes.saturating_add(n);
        if self.bytes > MAX_SCHEMA_BYTES {
            return Err(SchemaError::TooLarge);
        }
        Ok(())
    }

    fn node(&mut self) -> Result<(), SchemaError> {
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(SchemaError::TooManyNodes);
        }
        Ok(())
    }

    /// Depth-first copy; the depth check comes before descending, so recursion is bounded by
    /// `MAX_SCHEMA_DEPTH` whatever the input. `parent` is the keyword whose value `v` is ("" for
    /// the root and array items): under a name map (`properties`, `$defs`, ...) keys are names,
    /// so a property called `$ref` or `description` is not mistaken for the keyword; a regular
    /// expression (`pattern`, a `patternProperties` key) may spell control characters.
    fn copy(&mut self, v: &Value, depth: usize, parent: &str) -> Result<Value, SchemaError> {
        self.node()?;
        if depth > MAX_SCHEMA_DEPTH && (v.is_object() || v.is_array()) {
            return Err(SchemaError::TooDeep);
        }
        let names = NAME_MAPS.contains(&parent);
        match v {
            Value::Object(map) => {
                self.add_bytes(2)?;
                let mut out = Map::new();
                for (k, child) in map {
                    // Quotes, colon and comma around each key.
                    self.add_bytes(k.len() + 4)?;
                    if parent != "patternProperties" {
                        visible(k)?;
                    }
                    if names {
                        out.insert(k.clone(), self.copy(child, depth + 1, "")?);
                        continue;
                    }
                    if let Some(kw) = REF_KEYWORDS.iter().find(|kw| **kw == k.as_str()) {
                        match child {
                            Value::String(r) if r.starts_with('#') => {}
                            other => {
                                let value = preview(other, 120);
                                return Err(SchemaError::NonLocalRef { keyword: kw, value });
                            }
                        }
                    }
                    if k == "properties" {
                        // A property literally named "properties" inside `properties` is an
                        // object too, so this only fires on a malformed keyword.
                        let Value::Object(props) = child else {
                            return Err(SchemaError::PropertiesNotObject);
                        };
                        self.properties += props.len();
                        if self.properties > MAX_SCHEMA_PROPERTIES {
                            return Err(SchemaError::TooManyProperties);
                        }
                    }
                    let copied = match child {
                        Value::String(s) if PROSE_KEYS.contains(&k.as_str()) => {
                            self.node()?;
                            self.add_bytes(s.len() + 2)?;
                            Value::String(sanitize_marked(s, self.max_desc_chars))
                        }
                        _ => self.copy(child, depth + 1, k)?,
                    };
                    out.insert(k.clone(), copied);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => {
                self.add_bytes(2 + items.len())?;
                let mut out = Vec::with_capacity(items.len().min(MAX_SCHEMA_NODES));
                for item in items {
                    out.push(self.copy(item, depth + 1, "")?);
                }
                Ok(Value::Array(out))
            }
            Value::String(s) => {
                self.add_bytes(s.len() + 2)?;
                if parent != "pattern" {
                    visible(s)?;
                }
                Ok(v.clone())
            }
            _ => {
                self.add_bytes(8)?;
                Ok(v.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deep(n: usize) -> Value {
        let mut v = json!({"type": "string"});
        for _ in 0..n {
            v = json!({"type": "object", "properties": {"x": v}});
        }
        v
    }

    #[test]
    fn defaults_are_added_and_descriptions_cleaned() {
        let p = prepare_input_schema(
            &json!({"properties": {"q": {"type": "string", "description": "find\u{202e} it"}}}),
            4096,
        )
        .unwrap();
        assert_eq!(
            p,
            json!({"properties": {"q": {"type": "string", "description": "find it"}}, "type": "object"})
        );
        let p = prepare_input_schema(&json!({}), 4096).unwrap();
        assert_eq!(p, json!({"type": "object", "properties": {}}));
        let p = prepare_input_schema(&json!({"description": "abcdef"}), 3).unwrap();
        assert_eq!(p["description"], "abc…(truncated)");
    }

    #[test]
    fn a_property_named_description_is_a_schema_not_text() {
        let s = json!({"type": "object", "properties": {"description": {"type": "string", "description": "d"}}, "required": ["description"]});
        assert_eq!(prepare_input_schema(&s, 10).unwrap(), s);
    }

    #[test]
    fn property_names_are_not_keywords() {
        let s = json!({"type": "object", "properties": {"$ref": {"type": "string"}, "title": {"type": "integer", "title": "T"}}});
        assert_eq!(prepare_input_schema(&s, 10).unwrap(), s);
    }

    #[test]
    fn local_refs_and_defs_are_kept() {
        let s = json!({"type": "object", "$defs": {"pt": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
                       "properties": {"p": {"$ref": "#/$defs/pt"}}, "required": ["p"], "additionalProperties": false});
        assert_eq!(prepare_input_schema(&s, 100).unwrap(), s);
    }

    #[test]
    fn refusals() {
        let cases: Vec<(Value, &str)> = vec![
            (json!([]), "must be a JSON object, got an array"),
            (json!("x"), "got a string"),
            (json!(null), "got null"),
            (json!({"type": "array"}), "root type must be \"object\", got \"array\""),
            (json!({"type": ["object"]}), "root type"),
            (json!({"properties": {"a": {"$ref": "https://evil.example/s.json"}}}), "$ref must be a local reference starting with '#', got \"https://evil.example/s.json\""),
            (json!({"properties": {"a": {"$dynamicRef": "other.json#x"}}}), "$dynamicRef must be a local"),
            (json!({"$ref": 5}), "$ref must be a local reference starting with '#', got 5"),
            (json!({"properties": []}), "\"properties\" must be an object"),
            (json!({"required": "a"}), "\"required\" must be a list"),
            (json!({"properties": {"a": {"type": "bogus"}}}), "not a valid JSON Schema"),
            (deep(40), "deeper than 32"),
            (json!({"enum": vec![1; 5000]}), "more than 4096 nodes"),
            (json!({"description": "x".repeat(200_000)}), "larger than 131072 bytes"),
        ];
        for (schema, want) in cases {
            let err = prepare_input_schema(&schema, 100).unwrap_err().to_string();
            assert!(err.contains(want), "{err} / {want}");
        }
        let mut props = Map::new();
        for i in 0..600 {
            props.insert(format!("p{i}"), json!({}));
        }
        let err = prepare_input_schema(&json!({"properties": props}), 10).unwrap_err();
        assert_eq!(err, SchemaError::TooManyProperties);
    }

    #[test]
    fn deep_within_bound_is_accepted() {
        assert!(prepare_input_schema(&deep(14), 100).is_ok());
    }

    #[test]
    fn huge_schema_is_refused_at_the_first_bound_hit() {
        let big: Vec<Value> = (0..200_000).map(|i| json!(format!("value-{i}"))).collect();
        let err = prepare_input_schema(
            &json!({"type": "object", "properties": {"a": {"enum": big}}}),
            100,
        )
        .unwrap_err();
        // The walk stops as soon as a bound is crossed, long before the 200,000th value.
        assert!(
            matches!(err, SchemaError::TooLarge | SchemaError::TooManyNodes),
            "{err}"
        );
    }

    #[test]
    fn hidden_characters_outside_prose_are_refused() {
        for bad in [
            json!({"properties": {"pa\u{202e}th": {"type": "string"}}}),
            json!({"properties": {"mode": {"enum": ["read", "wr\u{200b}ite"]}}}),
            json!({"properties": {"x": {"type": "string", "default": "\u{e0049}gnore"}}}),
            json!({"properties": {"x": {"const": "a\u{1b}[2J"}}}),
        ] {
            let err = prepare_input_schema(&bad, 100).unwrap_err();
            assert!(matches!(err, SchemaError::HiddenCharacters { .. }), "{err}");
        }
        // Prose is cleaned, not refused; a regular expression may spell control characters;
        // newlines and tabs are ordinary text.
        let ok = prepare_input_schema(
            &json!({
                "$comment": "a\u{202e}b",
                "properties": {"s": {"type": "string", "pattern": "^[^\u{0}-\u{1f}]*$",
                    "default": "line 1\n\tline 2"}},
                "patternProperties": {"^x\u{1}": {"type": "string"}}
            }),
            100,
        )
        .unwrap();
        assert_eq!(ok["$comment"], "ab");
    }
}
