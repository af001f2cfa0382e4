//! Gemini function declarations: an OpenAPI-3 flavoured subset of JSON Schema. No `$ref` or
//! `$defs` (references are inlined, a recursive one is cut), no `additionalProperties`,
//! `nullable` instead of null types, string-only enums (other values are listed in the
//! description), `anyOf` allowed.

use super::{effective_root, pyjson, truthy, with_note};
use serde_json::{Map, Value};

/// Keywords Gemini accepts, copied as they are unless handled on their own below.
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "default",
    "title",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
];
/// Keywords converted on their own rather than copied.
const CONVERTED_KEYS: &[&str] = &[
    "type",
    "anyOf",
    "items",
    "properties",
    "enum",
    "const",
    "format",
    "default",
    "prefixItems",
];
/// Deeper than this (counting inlined references) a schema is cut to `{}`, "any value": Gemini
/// schemas are a few levels deep, and the native stack must not be the limit.
const MAX_DEPTH: usize = 64;

/// A `functionDeclarations` entry. `parameters` is left out for a tool without parameters
/// (Gemini rejects an object schema with no properties).
pub fn gemini_declaration(name: &str, description: &str, schema: &Value) -> Value {
    let mut out = Map::with_capacity(3);
    out.insert("name".into(), Value::String(name.into()));
    out.insert("description".into(), Value::String(description.into()));
    let converted = gemini_schema(&effective_root(schema));
    if converted.get("properties").is_some_and(truthy) {
        out.insert("parameters".into(), converted);
    }
    Value::Object(out)
}

/// The Gemini form of a root schema.
pub fn gemini_schema(schema: &Value) -> Value {
    let empty = Map::new();
    let defs = match schema.get("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => &empty,
    };
    Value::Object(convert(schema, defs, &mut Vec::new(), 0))
}

fn convert(
    schema: &Value,
    defs: &Map<String, Value>,
    seen: &mut Vec<String>,
    depth: usize,
) -> Map<String, Value> {
    let Value::Object(schema) = schema else {
        return Map::new();
    };
    if depth > MAX_DEPTH {
        return Map::new();
    }
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return inline_reference(schema, name, defs, seen, depth);
    }
    let mut nullable = false;
    let mut kind = schema.get("type");
    if let Some(Value::Array(types)) = kind {
        let rest: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        nullable = rest.len() < types.len();
        match rest.len() {
            0 => kind = None,
            1 => kind = Some(rest[0]),
            _ => return type_union(schema, &rest, nullable, defs, seen, depth),
        }
    }
    if kind.is_some_and(|t| t == "null") {
        return single("nullable", Value::Bool(true));
    }
    let mut out = Map::with_capacity(schema.len() + 1);
    if let Some(kind) = kind {
        out.insert("type".into(), kind.clone());
    }
    for (key, value) in schema {
        if !CONVERTED_KEYS.contains(&key.as_str()) && GEMINI_KEYS.contains(&key.as_str()) {
            out.insert(key.clone(), value.clone());
        }
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        let allowed: &[&str] = match kind.and_then(Value::as_str) {
            Some("string") => &["date-time", "enum"],
            Some("number") => &["float", "double"],
            Some("integer") => &["int32", "int64"],
            _ => &[],
        };
        if allowed.contains(&format) {
            out.insert("format".into(), Value::String(format.into()));
        }
    }
    let const_values;
    let enum_values = match schema.get("const") {
        Some(value) => {
            const_values = vec![value.clone()];
            Some(&const_values)
        }
        None => schema.get("enum").and_then(Value::as_array),
    };
    if let Some(values) = enum_values {
        nullable |= enumeration(&mut out, values);
    }
    if let Some(default) = schema.get("default").filter(|d| !d.is_null()) {
        out.insert("default".into(), default.clone());
    }
    if let Some(options) = schema.get("anyOf") {
        let (merged, null_option) = any_of(out, options, defs, seen, depth);
        out = merged;
        nullable |= null_option;
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let converted = properties
            .iter()
            .map(|(k, v)| (k.clone(), Value::Object(convert(v, defs, seen, depth + 1))))
            .collect();
        out.insert("properties".into(), Value::Object(converted));
        if let Some(required) = schema.get("required") {
            let kept = required
                .as_array()
                .map(|names| {
                    names
                        .iter()
                        .filter(|n| n.as_str().is_some_and(|n| properties.contains_key(n)))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            out.insert("required".into(), Value::Array(kept));
        }
    }
    match (schema.get("items"), schema.get("prefixItems")) {
        (Some(items @ Value::Object(_)), _) => {
            let converted = convert(items, defs, seen, depth + 1);
            out.insert("items".into(), Value::Object(converted));
        }
        (_, Some(Value::Array(members))) => {
            out.insert("items".into(), tuple_items(members, defs, seen, depth));
        }
        _ => {}
    }
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    out
}

fn single(key: &str, value: Value) -> Map<String, Value> {
    let mut out = Map::with_capacity(1);
    out.insert(key.into(), value);
    out
}

/// A `$ref` to `#/$defs/name`, inlined with the referring schema's other keywords on top. A
/// reference back into a definition being inlined is cut: Gemini has no references.
fn inline_reference(
    schema: &Map<String, Value>,
    name: &str,
    defs: &Map<String, Value>,
    seen: &mut Vec<String>,
    depth: usize,
) -> Map<String, Value> {
    if seen.iter().any(|s| s == name) {
        let description = schema
            .get("description")
            .filter(|d| truthy(d))
            .cloned()
            .unwrap_or_else(|| Value::String(format!("a nested {name} object")));
        let mut out = single("type", Value::String("object".into()));
        out.insert("description".into(), description);
        return out;
    }
    let mut target = match defs.get(name) {
        Some(Value::Object(def)) => def.clone(),
        _ => Map::new(),
    };
    for (key, value) in schema {
        if key != "$ref" {
            target.insert(key.clone(), value.clone());
        }
    }
    seen.push(name.to_string());
    let out = convert(&Value::Object(target), defs, seen, depth + 1);
    seen.pop();
    out
}

/// `"type": [a, b, ...]` with more than one non-null type: one `anyOf` option per type.
fn type_union(
    schema: &Map<String, Value>,
    types: &[&Value],
    nullable: bool,
    defs: &Map<String, Value>,
    seen: &mut Vec<String>,
    depth: usize,
) -> Map<String, Value> {
    let options = types
        .iter()
        .map(|t| {
            let mut variant: Map<String, Value> = schema
                .iter()
                .filter(|(k, _)| *k != "type")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            variant.insert("type".into(), (*t).clone());
            Value::Object(convert(&Value::Object(variant), defs, seen, depth + 1))
        })
        .collect();
    let mut out = single("anyOf", Value::Array(options));
    if nullable {
        out.insert("nullable".into(), Value::Bool(true));
    }
    out
}

/// String values become `enum`; other values are listed in the description. Returns whether
/// null was among the values (it becomes `nullable`).
fn enumeration(out: &mut Map<String, Value>, values: &[Value]) -> bool {
    let present: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
    if !present.is_empty() && present.iter().all(|v| v.is_string()) {
        out.insert(
            "enum".into(),
            Value::Array(present.iter().map(|v| (*v).clone()).collect()),
        );
    } else if !present.is_empty() {
        let listed: Vec<String> = present.iter().map(|v| pyjson::dumps(v)).collect();
        let note = format!("Allowed values: {}", listed.join(", "));
        let described = with_note(out.get("description"), &note, |text, note| {
            format!("{text} ({note})")
        });
        out.insert("description".into(), described);
    }
    present.len() < values.len()
}

/// The options of `anyOf`: a bare `{"type": "null"}` option becomes `nullable` (the second
/// value returned); a single remaining option is merged into the schema.
fn any_of(
    out: Map<String, Value>,
    options: &Value,
    defs: &Map<String, Value>,
    seen: &mut Vec<String>,
    depth: usize,
) -> (Map<String, Value>, bool) {
    let mut nullable = false;
    let mut converted = Vec::new();
    for option in options.as_array().map(Vec::as_slice).unwrap_or_default() {
        let bare_null = option
            .as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type").is_some_and(|t| t == "null"));
        if bare_null {
            nullable = true;
        } else {
            converted.push(convert(option, defs, seen, depth + 1));
        }
    }
    match converted.len() {
        0 => (out, nullable),
        1 => {
            let mut merged = converted.pop().expect("one option");
            for (key, value) in out {
                merged.entry(key).or_insert(value);
            }
            (merged, nullable)
        }
        _ => {
            let mut out = out;
            let options = converted.into_iter().map(Value::Object).collect();
            out.insert("anyOf".into(), Value::Array(options));
            (out, nullable)
        }
    }
}

/// A fixed tuple (`prefixItems`): Gemini has no positional items, so the element types are
/// described as one union (duplicates dropped).
fn tuple_items(
    members: &[Value],
    defs: &Map<String, Value>,
    seen: &mut Vec<String>,
    depth: usize,
) -> Value {
    let mut unique: Vec<Value> = Vec::with_capacity(members.len());
    for member in members {
        let converted = Value::Object(convert(member, defs, seen, depth + 1));
        if !unique.contains(&converted) {
            unique.push(converted);
        }
    }
    if unique.len() == 1 {
        unique.pop().expect("one member")
    } else {
        Value::Object(single("anyOf", Value::Array(unique)))
    }
}

#[cfg(test)]
mod tests;
