//! Parameters and the JSON Schema built from them, plus the text rendering of a tool
//! (`get_tools_description`); the provider renderings are in [`crate::render`].
//!
//! The root schema produced here is the single source of truth: the registry renders it for the
//! model and compiles the very same value into the validator.

mod sink;

use serde::Serialize;
use serde_json::Value;
pub use sink::{to_value, JsonSink, ValueSink};

/// One parameter of a tool, as the guide defines it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolParameter {
    pub name: String,
    /// JSON Schema type word: string, integer, number, boolean, array, object, null, or `any`
    /// (no type constraint; the property schema then has no `type`).
    pub type_: String,
    pub description: String,
    pub required: bool,
    /// Boxed, like `schema`: most parameters have neither, and a registry keeps every tool's.
    pub default: Option<Box<Value>>,
    /// A full property schema used verbatim when present (enum, items, nested objects survive).
    pub schema: Option<Box<Value>>,
}

impl ToolParameter {
    pub fn new(
        name: impl Into<String>,
        type_: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        ToolParameter {
            name: name.into(),
            type_: type_.into(),
            description: description.into(),
            required: true,
            default: None,
            schema: None,
        }
    }

    pub fn optional(mut self, default: Option<Value>) -> Self {
        self.required = false;
        self.default = default.map(Box::new);
        self
    }

    pub fn with_schema(mut self, schema: Value) -> Self {
        self.schema = Some(Box::new(schema));
        self
    }

    /// The property schema: `schema` verbatim, else type + description, plus the default when the
    /// parameter is optional and has a non-null default (falsy defaults such as 0 are kept).
    pub fn property_schema(&self) -> Value {
        to_value(|sink| self.write_property(sink))
    }

    fn write_property<S: JsonSink>(&self, sink: &mut S) -> Result<S::Out, S::Error> {
        if let Some(schema) = &self.schema {
            return sink.value(schema);
        }
        let mut prop = Vec::with_capacity(3);
        // `any` is not a JSON Schema type: it means no type constraint at all.
        if self.type_ != "any" {
            prop.push(("type", sink.string(&self.type_)?));
        }
        prop.push(("description", sink.string(&self.description)?));
        if !self.required {
            if let Some(default) = self.default.as_ref().filter(|d| !d.is_null()) {
                prop.push(("default", sink.value(default)?));
            }
        }
        sink.object(prop)
    }
}

/// Checks a parameter list before it becomes a schema: names must be unique and non-empty.
pub fn check_parameters(params: &[ToolParameter]) -> Result<(), String> {
    // Tools have a handful of parameters: comparing with the earlier ones beats hashing them,
    // which long lists still get.
    let mut seen = std::collections::HashSet::new();
    for (i, p) in params.iter().enumerate() {
        if p.name.is_empty() {
            return Err("a parameter has an empty name".into());
        }
        let repeated = if params.len() <= 16 {
            params[..i].iter().any(|q| q.name == p.name)
        } else {
            !seen.insert(p.name.as_str())
        };
        if repeated {
            return Err(format!("parameter '{}' is declared twice", p.name));
        }
        if let Some(schema) = &p.schema {
            if !schema.is_object() && !schema.is_boolean() {
                return Err(format!(
                    "parameter '{}' has a schema that is not a JSON object",
                    p.name
                ));
            }
        }
    }
    Ok(())
}

/// `{"type": "object", "properties": {...}, "required": [...]}`; `required` is always present.
pub fn root_schema(params: &[ToolParameter]) -> Value {
    to_value(|sink| write_root_schema(params, sink))
}

/// [`root_schema`] written into any sink.
pub fn write_root_schema<S: JsonSink>(
    params: &[ToolParameter],
    sink: &mut S,
) -> Result<S::Out, S::Error> {
    let mut properties = Vec::with_capacity(params.len());
    let mut required = Vec::new();
    for p in params {
        properties.push((p.name.as_str(), p.write_property(sink)?));
        if p.required {
            required.push(sink.string(&p.name)?);
        }
    }
    let root = vec![
        ("type", sink.string("object")?),
        ("properties", sink.object(properties)?),
        ("required", sink.array(required)?),
    ];
    sink.object(root)
}

/// One line of the parameter listing in `get_tools_description`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamLine {
    pub name: String,
    pub type_word: String,
    pub required: bool,
    pub default: Option<Value>,
    pub description: String,
}

/// Derives the parameter listing from a root schema, so the text the model reads and the schema
/// it is validated against never disagree (even for hand-written or remote schemas).
pub fn param_lines(root: &Value) -> Vec<ParamLine> {
    let Some(props) = root.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = root
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props
        .iter()
        .map(|(name, prop)| ParamLine {
            name: name.clone(),
            type_word: type_word(prop, root),
            required: required.contains(&name.as_str()),
            default: prop.get("default").cloned(),
            description: prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
        .collect()
}

/// A short human type word for a property schema: `integer`, `string|null`, `enum`, `any`.
pub fn type_word(schema: &Value, root: &Value) -> String {
    type_word_depth(schema, root, 0)
}

fn type_word_depth(schema: &Value, root: &Value, depth: usize) -> String {
    if depth > 8 {
        return "any".into();
    }
    match schema.get("type") {
        Some(Value::String(t)) => return t.clone(),
        Some(Value::Array(ts)) => {
            let words: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            if !words.is_empty() {
                return words.join("|");
            }
        }
        _ => {}
    }
    if schema.get("enum").is_some() || schema.get("const").is_some() {
        return "enum".into();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = schema.get(key) {
            let words: Vec<String> = members
                .iter()
                .map(|m| type_word_depth(m, root, depth + 1))
                .collect();
            return words.join("|");
        }
    }
    if let Some(Value::String(r)) = schema.get("$ref") {
        if let Some(target) = r.strip_prefix('#').and_then(|p| root.pointer(p)) {
            return type_word_depth(target, root, depth + 1);
        }
    }
    if schema.get("properties").is_some() {
        return "object".into();
    }
    "any".into()
}

/// The text block for one tool: `- name: description` then one indented line per parameter.
pub fn describe_tool(name: &str, description: &str, root: &Value) -> String {
    let mut out = format!("- {name}: {description}");
    for line in param_lines(root) {
        let label = if line.required {
            "required"
        } else {
            "optional"
        };
        // For an optional parameter `null` only means "use the default": saying "optional" is
        // clearer than "integer|null".
        let type_word = if line.required {
            line.type_word.clone()
        } else {
            let words: Vec<&str> = line.type_word.split('|').filter(|w| *w != "null").collect();
            if words.is_empty() {
                line.type_word.clone()
            } else {
                words.join("|")
            }
        };
        let default = match (&line.default, line.required) {
            (Some(d), false) if !d.is_null() => format!(", default {}", d),
            _ => String::new(),
        };
        out.push_str(&format!(
            "\n    - {} ({}, {}{}): {}",
            line.name, type_word, label, default, line.description
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> Vec<ToolParameter> {
        vec![
            ToolParameter::new("city", "string", "City name"),
            ToolParameter::new("days", "integer", "Days").optional(Some(json!(3))),
            ToolParameter::new("flag", "boolean", "A flag").optional(Some(json!(false))),
            ToolParameter::new("note", "string", "No default").optional(None),
            ToolParameter::new("action", "string", "ignored")
                .with_schema(json!({"type": "string", "enum": ["read", "append"]})),
        ]
    }

    #[test]
    fn root_schema_shape() {
        let s = root_schema(&params());
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["city", "action"]));
        assert_eq!(
            s["properties"]["city"],
            json!({"type": "string", "description": "City name"})
        );
        assert_eq!(s["properties"]["days"]["default"], 3);
        assert_eq!(
            s["properties"]["flag"]["default"], false,
            "falsy defaults are kept"
        );
        assert!(
            s["properties"]["note"].get("default").is_none(),
            "None defaults are not emitted"
        );
        assert_eq!(
            s["properties"]["action"],
            json!({"type": "string", "enum": ["read", "append"]})
        );
        let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "properties", "required"]);
        assert_eq!(root_schema(&[])["required"], json!([]));
    }

    #[test]
    fn describe_lists_parameters() {
        let text = describe_tool("weather", "Get weather", &root_schema(&params()));
        assert_eq!(
            text,
            "- weather: Get weather\n    - city (string, required): City name\n    - days (integer, optional, default 3): Days\n    - flag (boolean, optional, default false): A flag\n    - note (string, optional): No default\n    - action (string, required): "
        );
    }

    #[test]
    fn optional_parameters_do_not_show_null() {
        let root = json!({"type": "object", "properties": {
            "days": {"type": ["integer", "null"], "default": 3, "description": "Days"},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]}
        }, "required": ["maybe"]});
        assert_eq!(
            describe_tool("t", "d", &root),
            "- t: d\n    - days (integer, optional, default 3): Days\n    - maybe (string|null, required): "
        );
    }

    #[test]
    fn type_words() {
        let root = json!({"$defs": {"P": {"type": "object"}}});
        assert_eq!(
            type_word(&json!({"type": ["integer", "null"]}), &root),
            "integer|null"
        );
        assert_eq!(
            type_word(
                &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
                &root
            ),
            "integer|null"
        );
        assert_eq!(type_word(&json!({"enum": [1, 2]}), &root), "enum");
        assert_eq!(type_word(&json!({"$ref": "#/$defs/P"}), &root), "object");
        assert_eq!(type_word(&json!({}), &root), "any");
    }

    #[test]
    fn duplicate_parameters_are_refused() {
        let p = vec![
            ToolParameter::new("a", "string", ""),
            ToolParameter::new("a", "string", ""),
        ];
        assert!(check_parameters(&p)
            .unwrap_err()
            .contains("'a' is declared twice"));
    }
}
