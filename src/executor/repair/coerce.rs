//! Schema-aligned coercion: the arguments a model sent, brought in line with the tool's schema
//! where exactly one reading fits. It runs only on arguments that failed validation (and, on
//! valid ones, only to turn integral floats into ints for integer parameters); the caller
//! keeps the result only when it then validates.
//!
//! What it does, at every level the schema describes (properties, array items, local `$ref`s,
//! a single non-null `anyOf`/`oneOf` branch):
//! - a string that is exactly a JSON number, for an integer or number (`"5"`, `"5.0"` for an
//!   integer; never `"5 apples"`, never `"5.5"` for an integer);
//! - `"true"` / `"false"` for a boolean;
//! - an integral float for an integer (`5.0` to `5`);
//! - JSON text in a string for an array or object, when it starts with `[` or `{`;
//! - a single value for an array, as a one-element array (never a string that starts with `[`:
//!   that was meant as an array and is broken);
//! - a string enum value matched ignoring case, `-` and `_`, when exactly one value matches;
//! - a property name matched the same way, only for a property that is missing and has no
//!   key of its exact name, when exactly one property and one key match;
//! - `null` for an optional property whose schema refuses null, left out so its default applies
//!   (silently: it is what OpenAI's strict mode sends for "use the default").
//!
//! Two candidates are never chosen between: the ambiguity is reported, nothing is changed.

use super::keywords::{Keywords, Types};
use crate::executor::messages;
use crate::null_optional::{accepts_null, is_null_only, resolve};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// Deeper than this the walk stops (the validator still checks everything).
const MAX_DEPTH: usize = 64;

/// What a coercion did and what it would not decide.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Coercion {
    /// Each change, as the record and the model read it (`'a': "1" → 1`).
    pub repairs: Vec<String>,
    /// Each place where several readings fit, so nothing was changed.
    pub ambiguities: Vec<String>,
    /// A `null` meaning "use the default" was left out (not a repair: see [`super`]).
    pub pruned: bool,
}

/// Coerces `args` (which failed validation against `root`) in place.
pub fn coerce(root: &Value, args: &mut Value, out: &mut Coercion) {
    let mut walk = Walk {
        root,
        only_integers: false,
        out,
    };
    walk.value(root, args, &mut String::new(), 0);
}

/// Turns integral floats into ints wherever the schema says integer, in arguments that are
/// already valid (`5.0` passes an integer schema, but the tool must receive an int). Returns
/// whether anything changed; each change is added to `repairs`.
pub fn integral_floats(root: &Value, args: &mut Value, repairs: &mut Vec<String>) -> bool {
    if !has_float(args) {
        return false;
    }
    let mut out = Coercion::default();
    let mut walk = Walk {
        root,
        only_integers: true,
        out: &mut out,
    };
    walk.value(root, args, &mut String::new(), 0);
    let changed = !out.repairs.is_empty();
    repairs.append(&mut out.repairs);
    changed
}

/// Renames top-level keys the schema does not name to the one missing property each matches
/// (see the module's rules), in arguments that are already valid: a function called with
/// keyword arguments never receives an unknown key, so `initialSpeed` for `initial_speed`
/// would otherwise be dropped and the default used. Returns whether anything changed.
pub fn rename_unknown_keys(root: &Value, args: &mut Value, repairs: &mut Vec<String>) -> bool {
    let (Some(props), Some(map)) = (
        root.get("properties").and_then(Value::as_object),
        args.as_object_mut(),
    ) else {
        return false;
    };
    let mut out = Coercion::default();
    let mut walk = Walk {
        root,
        only_integers: false,
        out: &mut out,
    };
    walk.rename(props, map, "");
    let changed = !out.repairs.is_empty();
    repairs.append(&mut out.repairs);
    changed
}

/// Whether any number in `value` is a float (a cheap look before a schema walk).
pub fn has_float(value: &Value) -> bool {
    float_within(value, 0)
}

fn float_within(value: &Value, depth: usize) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) if depth < MAX_DEPTH => {
            items.iter().any(|v| float_within(v, depth + 1))
        }
        Value::Object(map) if depth < MAX_DEPTH => map.values().any(|v| float_within(v, depth + 1)),
        _ => false,
    }
}

/// A name or enum value compared ignoring case, `-` and `_`.
pub fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

struct Walk<'a, 'o> {
    root: &'a Value,
    /// Valid arguments: only integral floats for integers change.
    only_integers: bool,
    out: &'o mut Coercion,
}

impl Walk<'_, '_> {
    fn value(&mut self, schema: &Value, value: &mut Value, path: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(schema) = resolve(self.root, schema, 0) else {
            return;
        };
        let Some(obj) = schema.as_object() else {
            return;
        };
        let node = Keywords::read(obj);
        for branches in [node.any_of, node.one_of].into_iter().flatten() {
            let mut non_null = branches.iter().filter(|b| !is_null_only(b));
            if let (Some(only), None) = (non_null.next(), non_null.next()) {
                if !value.is_null() {
                    self.value(only, value, path, depth + 1);
                }
            }
        }
        if let Some([only]) = node.all_of {
            self.value(only, value, path, depth + 1);
        }
        self.scalar(&node, value, path);
        if !self.only_integers {
            self.enum_value(&node, value, path);
        }
        match value {
            Value::Object(map) => self.object(&node, map, path, depth),
            Value::Array(items) => {
                if let Some(item_schema) = node.items {
                    for (i, item) in items.iter_mut().enumerate() {
                        let len = push(path, &i.to_string());
                        self.value(item_schema, item, path, depth + 1);
                        path.truncate(len);
                    }
                }
            }
            _ => {}
        }
    }

    fn record(&mut self, path: &str, old: &Value, new: &Value) {
        self.out.repairs.push(messages::coerced(path, old, new));
    }

    /// A value of a type the schema refuses, turned into the one type that fits.
    fn scalar(&mut self, node: &Keywords<'_>, value: &mut Value, path: &str) {
        let Some(types) = node.types else { return };
        if accepts(types, value) {
            // 5.0 passes an integer schema, but the tool must get an int.
            if types.has(Types::INTEGER) && !types.has(Types::NUMBER) {
                if let Some(n) = value.as_number().filter(|n| n.is_f64()) {
                    if let Some(int) = integral(n) {
                        let new = Value::Number(int);
                        self.record(path, value, &new);
                        *value = new;
                    }
                }
            }
            return;
        }
        if self.only_integers {
            return;
        }
        let new = match &*value {
            Value::String(s) => from_string(types, s),
            _ => None,
        };
        let new = new.or_else(|| {
            let wrap = types.has(Types::ARRAY)
                && !value.is_null()
                && !value
                    .as_str()
                    .is_some_and(|s| s.trim_start().starts_with('['));
            wrap.then(|| Value::Array(vec![value.clone()]))
        });
        if let Some(new) = new {
            self.record(path, value, &new);
            *value = new;
        }
    }

    fn enum_value(&mut self, node: &Keywords<'_>, value: &mut Value, path: &str) {
        let Some(allowed) = node.enum_values else {
            return;
        };
        let Some(sent) = value.as_str() else { return };
        if allowed.contains(value) {
            return;
        }
        let folded = fold(sent);
        let matches: Vec<&str> = allowed
            .iter()
            .filter_map(Value::as_str)
            .filter(|a| fold(a) == folded)
            .collect();
        match matches.as_slice() {
            [] => {}
            [one] => {
                let new = Value::String((*one).to_owned());
                self.record(path, value, &new);
                *value = new;
            }
            several => self
                .out
                .ambiguities
                .push(messages::ambiguous_value(path, sent, several)),
        }
    }

    fn object(
        &mut self,
        node: &Keywords<'_>,
        map: &mut Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        let Some(props) = node.properties else {
            return;
        };
        if !self.only_integers {
            self.rename(props, map, path);
            self.drop_nulls(node.required.unwrap_or_default(), props, map);
        }
        for (k, v) in map.iter_mut() {
            if let Some(sub) = props.get(k) {
                let len = push(path, k);
                self.value(sub, v, path, depth + 1);
                path.truncate(len);
            }
        }
    }

    /// Keys the schema does not know, renamed to the one missing property they match. Linear
    /// in the keys and properties: each is folded once and matched through a map, so a model
    /// sending thousands of spellings of one name costs no more than thousands of keys.
    fn rename(&mut self, props: &Map<String, Value>, map: &mut Map<String, Value>, path: &str) {
        // The unknown keys in the order sent, and each folded spelling's keys.
        let unknown: Vec<(String, String)> = map
            .keys()
            .filter(|k| !props.contains_key(*k))
            .map(|k| (k.clone(), fold(k)))
            .collect();
        if unknown.is_empty() {
            return;
        }
        let mut spellings: HashMap<&str, Vec<&str>> = HashMap::new();
        for (key, folded) in &unknown {
            spellings.entry(folded).or_default().push(key);
        }
        // The missing properties each spelling matches, in the schema's order.
        let mut missing: HashMap<String, Vec<&String>> = HashMap::new();
        for p in props.keys().filter(|p| !map.contains_key(*p)) {
            let folded = fold(p);
            if spellings.contains_key(folded.as_str()) {
                missing.entry(folded).or_default().push(p);
            }
        }
        let mut renames = Vec::new();
        for (key, folded) in &unknown {
            match missing.get(folded).map(Vec::as_slice) {
                None | Some([]) => {}
                Some([one]) => match spellings[folded.as_str()].as_slice() {
                    [_] => renames.push((key, (*one).clone())),
                    rivals if rivals[0] == key => {
                        let shown = messages::ambiguous_keys(path, one, rivals);
                        self.out.ambiguities.push(shown);
                    }
                    _ => {}
                },
                Some(several) => {
                    let names: Vec<&str> = several.iter().map(|s| s.as_str()).collect();
                    self.out
                        .ambiguities
                        .push(messages::ambiguous_name(path, key, &names));
                }
            }
        }
        for (key, target) in renames {
            if let Some(v) = map.shift_remove(key) {
                self.out.repairs.push(messages::renamed(path, key, &target));
                map.insert(target, v);
            }
        }
    }

    /// `null` for an optional property that refuses null: left out, so its default applies.
    fn drop_nulls(
        &mut self,
        required: &[Value],
        props: &Map<String, Value>,
        map: &mut Map<String, Value>,
    ) {
        let required = |name: &str| required.iter().any(|n| n == name);
        let drop: Vec<String> = map
            .iter()
            .filter(|(k, v)| {
                v.is_null()
                    && !required(k)
                    && props
                        .get(*k)
                        .is_some_and(|p| !accepts_null(self.root, p, 0))
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in drop {
            map.shift_remove(&k);
            self.out.pruned = true;
        }
    }
}

/// Appends a dotted path segment; returns the length to truncate back to.
fn push(path: &mut String, segment: &str) -> usize {
    let len = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(segment);
    len
}

/// Whether a value's JSON type is one of `types` (an integral number is an integer).
fn accepts(types: Types, value: &Value) -> bool {
    types.has(match value {
        Value::Null => Types::NULL,
        Value::Bool(_) => Types::BOOLEAN,
        Value::Number(n) if integral_or_int(n) => Types::INTEGER | Types::NUMBER,
        Value::Number(_) => Types::NUMBER,
        Value::String(_) => Types::STRING,
        Value::Array(_) => Types::ARRAY,
        Value::Object(_) => Types::OBJECT,
    })
}

fn integral_or_int(n: &Number) -> bool {
    !n.is_f64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// An integral float as an int, when it is exactly one (|x| < 2^53).
fn integral(n: &Number) -> Option<Number> {
    let f = n.as_f64()?;
    if f.fract() != 0.0 || f.abs() >= 9_007_199_254_740_992.0 {
        return None;
    }
    Some(Number::from(f as i64))
}

/// The one value of a refused type a string stands for.
fn from_string(types: Types, s: &str) -> Option<Value> {
    let has = |t: u8| types.has(t);
    let numeric = has(Types::INTEGER) || has(Types::NUMBER);
    if numeric && super::lenient::number_end(s.as_bytes(), 0) == Some(s.len()) {
        if let Ok(n) = serde_json::from_str::<Number>(s) {
            if has(Types::NUMBER) || !n.is_f64() {
                return Some(Value::Number(n));
            }
            if let Some(int) = integral(&n) {
                return Some(Value::Number(int));
            }
        }
    }
    if has(Types::BOOLEAN) {
        match s {
            "true" => return Some(Value::Bool(true)),
            "false" => return Some(Value::Bool(false)),
            _ => {}
        }
    }
    let text = s.trim_start();
    let container = (has(Types::ARRAY) && text.starts_with('['))
        || (has(Types::OBJECT) && text.starts_with('{'));
    if container {
        if let Ok(v) = serde_json::from_str::<Value>(s) {
            if (v.is_array() && has(Types::ARRAY)) || (v.is_object() && has(Types::OBJECT)) {
                return Some(v);
            }
        }
    }
    None
}
