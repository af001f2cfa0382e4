//! Anthropic tool use: `{name, description, input_schema}`; the schema is the root schema as is.

use super::{effective_root, truthy};
use serde_json::{Map, Value};

/// The tool entry; the schema is taken by value (the caller decides whether it is a copy).
pub fn anthropic_tool(name: &str, description: &str, schema: Value) -> Value {
    let schema = if truthy(&schema) {
        schema
    } else {
        effective_root(&schema).into_owned()
    };
    let mut tool = Map::with_capacity(3);
    tool.insert("name".into(), Value::String(name.into()));
    tool.insert("description".into(), Value::String(description.into()));
    tool.insert("input_schema".into(), schema);
    Value::Object(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_is_passed_as_input_schema() {
        let schema = json!({"type": "object", "properties": {}, "required": []});
        assert_eq!(
            serde_json::to_string(&anthropic_tool("now", "The time.", schema)).unwrap(),
            r#"{"name":"now","description":"The time.","input_schema":{"type":"object","properties":{},"required":[]}}"#
        );
    }

    #[test]
    fn an_empty_schema_becomes_an_object_without_properties() {
        assert_eq!(
            anthropic_tool("t", "", json!({}))["input_schema"],
            json!({"type": "object", "properties": {}})
        );
    }
}
