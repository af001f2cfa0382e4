//! OpenAI strict mode (`"strict": true`): every property listed in `required`, optional ones
//! nullable, `additionalProperties: false` on every object, and only the keywords strict mode
//! knows.
//!
//! The strict form makes every optional property nullable (unless its type already admits null)
//! and mentions its default in the description; the registry's validation treats a null sent
//! for an optional property whose own schema refuses null as "absent" and drops it before the
//! tool runs (`Entry::check_args`), so the default applies. The plain renderings never add null.
//! A schema that cannot be made strict (an open `dict[str, T]`, a fixed tuple, `Any`, a keyword
//! strict mode lacks) gets [`NotStrict`] with the reason, and the tool is rendered without
//! `strict`.

use super::openai::function_entry;
use super::{effective_root, pyjson, truthy, with_note};
use serde_json::{Map, Value};

/// Why a schema has no OpenAI strict form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotStrict(pub String);

impl std::fmt::Display for NotStrict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotStrict {}

/// Keywords strict mode accepts (OpenAI structured outputs, "supported schemas").
const STRICT_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
/// Annotations that constrain nothing: left out of the strict form (a default is mentioned in
/// the description instead, since null is how the model asks for it).
const ANNOTATIONS: &[&str] = &[
    "default",
    "title",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
];
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords that give a schema a shape; without one it accepts any value.
const SHAPING_KEYS: &[&str] = &["type", "$ref", "anyOf", "enum", "const"];
const MAX_DEPTH: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM: usize = 1000;

/// The OpenAI `tools` entry in strict form, or the plain entry and the reason it is not strict.
pub fn strict_tool(name: &str, description: &str, schema: &Value) -> (Value, Option<String>) {
    match strict_schema(&effective_root(schema)) {
        Ok(form) => (function_entry(name, description, form, true), None),
        Err(NotStrict(reason)) => (
            super::openai_tool(name, description, schema.clone()),
            Some(reason),
        ),
    }
}

/// The strict form of a root schema.
pub fn strict_schema(schema: &Value) -> Result<Value, NotStrict> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(NotStrict("the root schema must be an object".into()));
    }
    let mut counter = 0;
    let mut out = convert(schema, "", 0, &mut counter)?;
    if let Some(Value::Object(defs)) = schema.get("$defs") {
        let mut converted = Map::with_capacity(defs.len());
        for (name, def) in defs {
            let form = convert(def, &format!("$defs.{name}"), 0, &mut counter)?;
            converted.insert(name.clone(), Value::Object(form));
        }
        out.insert("$defs".into(), Value::Object(converted));
    }
    Ok(Value::Object(out))
}

/// How an error names a place: `parameter 'a.b'`, a `$defs.X` path as is, or `the root`.
fn place(path: &str) -> String {
    if path.is_empty() {
        "the root".into()
    } else if path.starts_with("$defs") {
        path.into()
    } else {
        format!("parameter '{path}'")
    }
}

fn refuse(path: &str, what: &str) -> NotStrict {
    NotStrict(format!("{}{what}", place(path)))
}

fn convert(
    schema: &Value,
    path: &str,
    depth: usize,
    counter: &mut usize,
) -> Result<Map<String, Value>, NotStrict> {
    let Value::Object(schema) = schema else {
        return Err(refuse(
            path,
            ": boolean schemas are not supported by strict mode",
        ));
    };
    if depth > MAX_DEPTH {
        return Err(refuse(
            path,
            &format!(": nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    if !SHAPING_KEYS.iter().any(|k| schema.contains_key(*k)) {
        return Err(refuse(path, " accepts any value; strict mode needs a type"));
    }
    let mut out = Map::with_capacity(schema.len() + 2);
    for (key, value) in schema {
        if ANNOTATIONS.contains(&key.as_str()) || key == "$defs" {
            continue;
        }
        if !STRICT_KEYS.contains(&key.as_str()) {
            return Err(refuse(
                path,
                &format!(" uses '{key}', which strict mode does not support"),
            ));
        }
        if key == "format" && !value.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f)) {
            continue;
        }
        out.insert(key.clone(), value.clone());
    }
    if out
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| values.len() > MAX_ENUM)
    {
        return Err(refuse(path, &format!(": more than {MAX_ENUM} enum values")));
    }
    if let Some(default) = schema.get("default").filter(|d| !d.is_null()) {
        let note = format!("(default: {})", pyjson::dumps(default));
        let described = with_note(out.get("description"), &note, |text, note| {
            format!("{text} {note}")
        });
        out.insert("description".into(), described);
    }
    if let Some(any_of) = out.get("anyOf") {
        let Value::Array(options) = any_of else {
            return Err(refuse(path, ": anyOf must be a list of schemas"));
        };
        let converted = options
            .iter()
            .map(|option| convert(option, path, depth + 1, counter).map(Value::Object))
            .collect::<Result<Vec<_>, _>>()?;
        out.insert("anyOf".into(), Value::Array(converted));
    }
    let is_kind = |kind: &str| match out.get("type") {
        Some(Value::String(t)) => t == kind,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == kind),
        _ => false,
    };
    let (object, array) = (is_kind("object"), is_kind("array"));
    if object {
        let properties = object_properties(schema, &out, path, depth, counter)?;
        let required = properties.keys().cloned().map(Value::String).collect();
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(required));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if array {
        let items = match out.get("items") {
            Some(items) if !items.is_null() => items,
            _ => {
                return Err(refuse(
                    path,
                    " is an array without an item type; strict mode needs one (use list[T])",
                ))
            }
        };
        let converted = convert(items, &format!("{path}[]"), depth + 1, counter)?;
        out.insert("items".into(), Value::Object(converted));
    }
    Ok(out)
}

/// The strict properties of an object schema: each converted, the optional ones made nullable.
fn object_properties(
    schema: &Map<String, Value>,
    out: &Map<String, Value>,
    path: &str,
    depth: usize,
    counter: &mut usize,
) -> Result<Map<String, Value>, NotStrict> {
    if out
        .get("additionalProperties")
        .is_some_and(|extra| *extra != Value::Bool(false))
    {
        return Err(refuse(
            path,
            " allows additional properties (e.g. dict[str, T]); strict mode needs fixed properties",
        ));
    }
    let Some(Value::Object(properties)) = out.get("properties") else {
        return Err(refuse(
            path,
            " is a free-form object (dict); strict mode needs fixed properties",
        ));
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut converted = Map::with_capacity(properties.len());
    for (name, sub) in properties {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        *counter += 1;
        if *counter > MAX_PROPERTIES {
            return Err(NotStrict(format!(
                "more than {MAX_PROPERTIES} properties in total"
            )));
        }
        let mut form = convert(sub, &sub_path, depth + 1, counter)?;
        if !required.contains(&name.as_str()) && !accepts_null(&form) {
            form = nullable(form);
        }
        converted.insert(name.clone(), Value::Object(form));
    }
    Ok(converted)
}

fn accepts_null(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|options| {
            options
                .iter()
                .any(|o| o.as_object().is_some_and(accepts_null))
        })
}

/// `{"type": [t, "null"]}` (and null among the enum values) for a plain typed schema; otherwise
/// `{"anyOf": [schema, {"type": "null"}]}` with the description kept outside.
fn nullable(mut schema: Map<String, Value>) -> Map<String, Value> {
    let plain_type = match schema.get("type") {
        Some(Value::String(t)) if !schema.contains_key("anyOf") && !schema.contains_key("$ref") => {
            Some(t.clone())
        }
        _ => None,
    };
    if let Some(t) = plain_type {
        schema.insert(
            "type".into(),
            Value::Array(vec![Value::String(t), Value::String("null".into())]),
        );
        if let Some(Value::Array(values)) = schema.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
        return schema;
    }
    let description = schema.shift_remove("description");
    let mut null = Map::with_capacity(1);
    null.insert("type".into(), Value::String("null".into()));
    let mut out = Map::with_capacity(2);
    out.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(schema), Value::Object(null)]),
    );
    if let Some(description) = description.filter(truthy) {
        out.insert("description".into(), description);
    }
    out
}

#[cfg(test)]
mod tests;
