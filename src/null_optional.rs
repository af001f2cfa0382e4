//! `null` for an optional property means "leave it out".
//!
//! A schema says what a tool accepts: a parameter with a default is optional, and nullable only
//! when its type admits `None`. OpenAI's strict mode, however, lists every property in
//! `required`, so the strict rendering makes optional properties nullable and a model in strict
//! mode sends `null` where it means "use the default". Such a null would fail validation against
//! the real schema; [`drop_null_optionals`] removes it from the arguments instead, at every
//! level the schema describes (properties, array items, local `$ref`s, a single non-null
//! `anyOf` / `oneOf` branch, `allOf`), so the tool sees the property absent and its default
//! applies. A null is kept wherever the property's own schema accepts it, and a null for a
//! required property is left for the validator to report.

use serde_json::{Map, Value};

/// Deeper than this the walk stops (the validator still checks everything).
const MAX_DEPTH: usize = 64;

/// Removes, in place, every `null` sent for an optional property whose schema refuses null.
/// Returns whether anything was removed.
pub fn drop_null_optionals(root: &Value, args: &mut Value) -> bool {
    walk(root, root, args, 0)
}

fn walk(root: &Value, schema: &Value, value: &mut Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Some(schema) = resolve(root, schema, 0) else {
        return false;
    };
    let mut changed = false;
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                changed |= drop_in_object(root, schema, props, map, depth);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items.iter_mut() {
                    changed |= walk(root, item_schema, item, depth + 1);
                }
            }
        }
        _ => return false,
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut non_null = branches.iter().filter(|b| !is_null_only(b));
            if let (Some(only), None) = (non_null.next(), non_null.next()) {
                changed |= walk(root, only, value, depth + 1);
            }
        }
    }
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        for part in parts {
            changed |= walk(root, part, value, depth + 1);
        }
    }
    changed
}

fn drop_in_object(
    root: &Value,
    schema: &Value,
    props: &Map<String, Value>,
    map: &mut Map<String, Value>,
    depth: usize,
) -> bool {
    let required = |name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    let drop: Vec<String> = map
        .iter()
        .filter(|(k, v)| {
            v.is_null() && !required(k) && props.get(*k).is_some_and(|p| !accepts_null(root, p, 0))
        })
        .map(|(k, _)| k.clone())
        .collect();
    let mut changed = !drop.is_empty();
    for k in &drop {
        map.shift_remove(k);
    }
    for (k, v) in map.iter_mut() {
        if let Some(sub) = props.get(k) {
            changed |= walk(root, sub, v, depth + 1);
        }
    }
    changed
}

/// The schema a local `$ref` (`#/$defs/X`, `#/definitions/X`) points to; the schema itself
/// when it has no `$ref`; None for a ref that cannot be followed.
pub(crate) fn resolve<'a>(root: &'a Value, schema: &'a Value, hops: usize) -> Option<&'a Value> {
    let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
        return Some(schema);
    };
    if hops > MAX_DEPTH {
        return None;
    }
    let pointer = reference.strip_prefix('#')?;
    resolve(root, root.pointer(pointer)?, hops + 1)
}

pub(crate) fn is_null_only(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// Whether `schema` admits `null` (unknown or unconstrained schemas count as admitting it, so
/// nothing they might accept is dropped).
pub(crate) fn accepts_null(root: &Value, schema: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return true;
    }
    let Some(schema) = resolve(root, schema, 0) else {
        return true;
    };
    let Some(obj) = schema.as_object() else {
        return schema != &Value::Bool(false);
    };
    if let Some(t) = obj.get("type") {
        let admits = match t {
            Value::String(s) => s == "null",
            Value::Array(ts) => ts.iter().any(|t| t == "null"),
            _ => true,
        };
        if !admits {
            return false;
        }
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        if !values.iter().any(Value::is_null) {
            return false;
        }
    }
    if let Some(c) = obj.get("const") {
        if !c.is_null() {
            return false;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            if !branches.iter().any(|b| accepts_null(root, b, depth + 1)) {
                return false;
            }
        }
    }
    if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
        if !parts.iter().all(|p| accepts_null(root, p, depth + 1)) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dropped(schema: Value, mut args: Value) -> (bool, Value) {
        let changed = drop_null_optionals(&schema, &mut args);
        (changed, args)
    }

    #[test]
    fn a_null_for_an_optional_non_nullable_property_is_dropped() {
        let schema = json!({"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
            "maybe": {"type": ["integer", "null"]},
            "any": {}
        }, "required": ["city"]});
        let (changed, args) = dropped(
            schema.clone(),
            json!({"city": null, "unit": null, "maybe": null, "any": null}),
        );
        assert!(changed);
        assert_eq!(args, json!({"city": null, "maybe": null, "any": null}));
        let (changed, args) = dropped(schema, json!({"city": "Oslo", "unit": "metric"}));
        assert!(!changed);
        assert_eq!(args, json!({"city": "Oslo", "unit": "metric"}));
    }

    #[test]
    fn nested_objects_refs_items_and_optional_unions_are_followed() {
        let schema = json!({
            "type": "object",
            "$defs": {"W": {"type": "object", "properties": {
                "start": {"type": "string"}, "days": {"type": "integer", "default": 1}
            }, "required": ["start"]}},
            "properties": {
                "w": {"$ref": "#/$defs/W"},
                "ws": {"type": "array", "items": {"$ref": "#/$defs/W"}},
                "maybe_w": {"anyOf": [{"$ref": "#/$defs/W"}, {"type": "null"}]},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
            },
            "required": ["w"]
        });
        let (changed, args) = dropped(
            schema,
            json!({
                "w": {"start": "a", "days": null},
                "ws": [{"start": "b", "days": null}],
                "maybe_w": {"start": "c", "days": null},
                "either": null
            }),
        );
        assert!(changed);
        assert_eq!(
            args,
            json!({"w": {"start": "a"}, "ws": [{"start": "b"}], "maybe_w": {"start": "c"}})
        );
    }

    #[test]
    fn nullable_refs_and_enums_with_null_keep_their_null() {
        let schema = json!({
            "type": "object",
            "$defs": {"N": {"type": ["string", "null"]}},
            "properties": {
                "n": {"$ref": "#/$defs/N"},
                "e": {"enum": ["a", null]},
                "broken": {"$ref": "#/$defs/Missing"}
            }
        });
        let (changed, args) = dropped(schema, json!({"n": null, "e": null, "broken": null}));
        assert!(!changed);
        assert_eq!(args, json!({"n": null, "e": null, "broken": null}));
    }
}
