//! OpenAI function calling: `{"type": "function", "function": {name, description, parameters}}`.

use crate::schema::{to_value, JsonSink};
use serde_json::Value;

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
    to_value(|sink| write_openai_tool(name, description, parameters, strict, sink))
}

/// The entry written into any sink, around `parameters` already written into it.
pub fn write_openai_tool<S: JsonSink>(
    name: &str,
    description: &str,
    parameters: S::Out,
    strict: bool,
    sink: &mut S,
) -> Result<S::Out, S::Error> {
    let mut function = Vec::with_capacity(4);
    function.push(("name", sink.string(name)?));
    function.push(("description", sink.string(description)?));
    function.push(("parameters", parameters));
    if strict {
        function.push(("strict", sink.boolean(true)?));
    }
    let tool = vec![
        ("type", sink.string("function")?),
        ("function", sink.object(function)?),
    ];
    sink.object(tool)
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
