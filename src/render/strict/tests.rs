use super::*;
use serde_json::json;

fn reason(schema: Value) -> String {
    strict_schema(&schema).unwrap_err().0
}

#[test]
fn optional_properties_become_nullable_and_every_object_is_closed() {
    let form = strict_schema(&json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"$ref": "#/$defs/X"},
            "c": {"type": "string", "enum": ["x"]},
            "d": {"type": "string", "description": "D", "anyOf": [{"type": "string"}]}
        },
        "required": ["a"],
        "$defs": {"X": {"type": "object", "properties": {"y": {"type": "integer"}}}}
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_string(&form).unwrap(),
        concat!(
            r##"{"type":"object","properties":{"a":{"type":"integer"},"##,
            r##""b":{"anyOf":[{"$ref":"#/$defs/X"},{"type":"null"}]},"##,
            r##""c":{"type":["string","null"],"enum":["x",null]},"##,
            r##""d":{"anyOf":[{"type":"string","anyOf":[{"type":"string"}]},{"type":"null"}],"description":"D"}},"##,
            r##""required":["a","b","c","d"],"additionalProperties":false,"##,
            r##""$defs":{"X":{"type":"object","properties":{"y":{"type":["integer","null"]}},"required":["y"],"additionalProperties":false}}}"##
        )
    );
}

#[test]
fn annotations_and_unknown_formats_are_dropped_and_defaults_described() {
    let form = strict_schema(&json!({
        "type": "object",
        "title": "T",
        "properties": {
            "p": {"type": "string", "format": "path", "title": "P", "examples": ["a"]},
            "d": {"type": "string", "format": "date"},
            "n": {"type": ["number", "null"], "default": 1e-5},
            "m": {"type": ["string", "null"], "description": "Mode", "default": "fast"},
            "o": {"type": ["object", "null"], "properties": {}, "default": {"k": [1, 2]}}
        },
        "required": ["p", "d"]
    }))
    .unwrap();
    assert_eq!(form["properties"]["p"], json!({"type": "string"}));
    assert_eq!(
        form["properties"]["d"],
        json!({"type": "string", "format": "date"})
    );
    assert_eq!(form["properties"]["n"]["description"], "(default: 1e-05)");
    assert_eq!(
        form["properties"]["m"]["description"],
        "Mode (default: \"fast\")"
    );
    assert_eq!(
        form["properties"]["o"]["description"],
        "(default: {\"k\": [1, 2]})"
    );
    assert!(form.get("title").is_none());
    let keys: Vec<&String> = form["properties"]["m"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["type", "description"]);
}

#[test]
fn refusals_name_the_place_and_the_reason() {
    assert_eq!(
        reason(json!({"type": "array"})),
        "the root schema must be an object"
    );
    assert_eq!(
        reason(
            json!({"type": "object", "properties": {"s": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}})
        ),
        "parameter 's' uses 'uniqueItems', which strict mode does not support"
    );
    assert_eq!(
        reason(json!({"type": "object", "properties": {"d": {"type": "object"}}})),
        "parameter 'd' is a free-form object (dict); strict mode needs fixed properties"
    );
    assert_eq!(
        reason(json!({"type": "object", "properties": {"d": {"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}}})),
        "parameter 'd' allows additional properties (e.g. dict[str, T]); strict mode needs fixed properties"
    );
    assert_eq!(
        reason(json!({"type": "object", "properties": {"a": {"type": "array"}}})),
        "parameter 'a' is an array without an item type; strict mode needs one (use list[T])"
    );
    assert_eq!(
        reason(json!({"type": "object", "properties": {"x": {}}})),
        "parameter 'x' accepts any value; strict mode needs a type"
    );
    assert_eq!(
        reason(json!({"type": "object", "properties": {"x": true}})),
        "parameter 'x': boolean schemas are not supported by strict mode"
    );
    assert_eq!(
        reason(
            json!({"type": "object", "properties": {}, "$defs": {"P": {"type": "object", "properties": {"q": {"type": "string", "minLength": 1}}}}})
        ),
        "$defs.P.q uses 'minLength', which strict mode does not support"
    );
    assert_eq!(
        reason(
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "array"}}}})
        ),
        "parameter 'l[]' is an array without an item type; strict mode needs one (use list[T])"
    );
}

#[test]
fn limits_on_depth_properties_and_enums() {
    let mut deep = json!({"type": "string"});
    for _ in 0..12 {
        deep = json!({"type": "object", "properties": {"n": deep}, "required": ["n"]});
    }
    assert!(reason(deep).ends_with(": nested deeper than 10 levels"));
    let values: Vec<Value> = (0..1001).map(|i| json!(i)).collect();
    assert_eq!(
        reason(json!({"type": "object", "properties": {"e": {"enum": values}}})),
        "parameter 'e': more than 1000 enum values"
    );
    let many: Map<String, Value> = (0..5001)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    assert_eq!(
        reason(json!({"type": "object", "properties": many})),
        "more than 5000 properties in total"
    );
}

#[test]
fn the_tool_entry_is_strict_or_plain_with_the_reason() {
    let good = json!({"type": "object", "properties": {}, "required": []});
    let (entry, why) = strict_tool("now", "The time.", &good);
    assert_eq!(why, None);
    assert_eq!(
        serde_json::to_string(&entry).unwrap(),
        r##"{"type":"function","function":{"name":"now","description":"The time.","parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false},"strict":true}}"##
    );
    let open = json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}});
    let (entry, why) = strict_tool("m", "", &open);
    assert!(why
        .unwrap()
        .starts_with("parameter 'm' allows additional properties"));
    assert_eq!(entry, super::super::openai_tool("m", "", open.clone()));
    let (entry, why) = strict_tool("e", "", &json!({}));
    assert_eq!(why, None, "an empty root is a tool without parameters");
    assert_eq!(
        entry["function"]["parameters"]["additionalProperties"],
        false
    );
}
