//! OpenAI function calling: `{"type": "function", "function": {name, description, parameters}}`.

use serde_json::{Map, Value};

/// One entry of the OpenAI `tools` list, with the root schema as `parameters` (taken by value:
/// the caller decides whether the schema it renders is a copy).
pub fn openai_tool(name: &str, description: &str, parameters: Value) -> Value {
    function_entry(name, description, parameters, false)
}

/// The entry around `parameters`; `strict` adds `"strict": true` after them.
pub(super) fn function_entry(
    name: &str,
    description: &str,
    parameters: Value,
    strict: bool,
) -> Value {
    let mut function = Map::with_capacity(4);
    function.insert("name".into(), Value::String(name.into()));
    function.insert("description".into(), Value::String(description.into()));
    function.insert("parameters".into(), parameters);
    if strict {
        function.insert("strict".into(), Value::Bool(true));
    }
    let mut tool = Map::with_capacity(2);
    tool.insert("type".into(), Value::String("function".into()));
    tool.insert("function".into(), Value::Object(function));
    Value::Object(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_entry_wraps_the_schema_verbatim() {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]});
        let tool = openai_tool("inc", "Add one.", schema);
        assert_eq!(
            serde_json::to_string(&tool).unwrap(),
            r#"{"type":"function","function":{"name":"inc","description":"Add one.","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}"#
        );
    }
}
