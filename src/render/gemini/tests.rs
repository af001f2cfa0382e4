use super::*;
use serde_json::json;

fn text(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn the_table_of_conversions() {
    let cases = [
        (
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "nullable": true}),
        ),
        (
            json!({"type": ["integer", "string"]}),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        ),
        (json!({"const": "x"}), json!({"enum": ["x"]})),
        (
            json!({"type": "string", "format": "uuid"}),
            json!({"type": "string"}),
        ),
        (
            json!({"type": "string", "format": "date-time"}),
            json!({"type": "string", "format": "date-time"}),
        ),
        (
            json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}),
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        (json!({"type": "null"}), json!({"nullable": true})),
        (json!({"type": ["null"]}), json!({"nullable": true})),
        (json!(true), json!({})),
    ];
    for (schema, expected) in cases {
        assert_eq!(gemini_schema(&schema), expected, "{schema}");
    }
}

#[test]
fn nullable_types_enums_and_defaults_keep_their_order() {
    let form = gemini_schema(&json!({
        "type": ["string", "null"],
        "enum": ["fast", "slow", null],
        "default": "fast",
        "additionalProperties": false
    }));
    assert_eq!(
        text(&form),
        r#"{"type":"string","enum":["fast","slow"],"default":"fast","nullable":true}"#
    );
}

#[test]
fn values_that_are_not_strings_are_listed_in_the_description() {
    let form = gemini_schema(&json!({"type": "integer", "enum": [1, 2], "description": "Level"}));
    assert_eq!(
        text(&form),
        r#"{"type":"integer","description":"Level (Allowed values: 1, 2)"}"#
    );
    let form = gemini_schema(&json!({"enum": [1.5, {"a": [true]}]}));
    assert_eq!(
        form,
        json!({"description": "Allowed values: 1.5, {\"a\": [true]}"})
    );
}

#[test]
fn a_single_any_of_option_is_merged() {
    let form = gemini_schema(&json!({
        "description": "Maybe a date",
        "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
        "default": null
    }));
    assert_eq!(
        text(&form),
        r#"{"type":"string","format":"date-time","description":"Maybe a date","nullable":true}"#
    );
}

#[test]
fn references_are_inlined_and_cycles_cut() {
    let root = json!({
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node", "description": "The root"}},
        "required": ["root", "missing"],
        "$defs": {"Node": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            },
            "required": ["value"]
        }}
    });
    let form = gemini_schema(&root);
    assert_eq!(form["required"], json!(["root"]));
    let node = &form["properties"]["root"];
    assert_eq!(node["description"], "The root");
    assert_eq!(node["properties"]["value"], json!({"type": "integer"}));
    assert_eq!(
        node["properties"]["children"]["items"],
        json!({"type": "object", "description": "a nested Node object"})
    );
    assert!(form.get("$defs").is_none());
}

#[test]
fn tuples_become_a_union_of_their_element_types() {
    let pair = json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}, {"type": "integer"}]});
    assert_eq!(
        gemini_schema(&pair)["items"],
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    );
    let same = json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]});
    assert_eq!(gemini_schema(&same)["items"], json!({"type": "number"}));
}

/// `required` keeps the place it had among the copied keywords, before `properties`.
#[test]
fn declarations_leave_out_empty_parameters() {
    let none = json!({"type": "object", "properties": {}, "required": []});
    assert_eq!(
        text(&gemini_declaration("now", "The time.", &none)),
        r#"{"name":"now","description":"The time."}"#
    );
    let one =
        json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]});
    assert_eq!(
        text(&gemini_declaration("inc", "Add one.", &one)),
        r#"{"name":"inc","description":"Add one.","parameters":{"type":"object","required":["x"],"properties":{"x":{"type":"integer"}}}}"#
    );
}

#[test]
fn very_deep_schemas_are_cut_instead_of_overflowing() {
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "array", "items": deep});
    }
    let form = gemini_schema(&deep);
    let mut level = &form;
    let mut depth = 0;
    while let Some(items) = level.get("items") {
        level = items;
        depth += 1;
    }
    assert_eq!(depth, MAX_DEPTH + 1);
    assert_eq!(*level, json!({}));
}
