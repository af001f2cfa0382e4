//! JSON text in the shape Python's `json.dumps(value, ensure_ascii=False)` gives it: `", "` and
//! `": "` separators and floats written like Python's `repr` (`1e+16`, `1e-05`, `3.0`). Notes a
//! renderer adds to a description (a default, the allowed values) read the way the schemas'
//! authors wrote them in Python. Floats use the calculator's `repr` (one implementation).

use crate::builtins::calculator::float_repr;
use serde_json::Value;
use std::fmt::Write;

/// How containers are written: the separators, and whether object keys are sorted.
#[derive(Clone, Copy)]
struct Style {
    item: &'static str,
    key: &'static str,
    sorted: bool,
}

const DUMPS: Style = Style {
    item: ", ",
    key: ": ",
    sorted: false,
};

const CANONICAL: Style = Style {
    item: ",",
    key: ":",
    sorted: true,
};

pub fn dumps(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, DUMPS);
    out
}

/// Canonical JSON: Python's `json.dumps(value, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=False)` (keys sorted by code point at every level, no whitespace), so a
/// digest over it can be checked from Python.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, CANONICAL);
    out
}

fn write_value(out: &mut String, value: &Value, style: Style) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => {
                let _ = write!(out, "{i}");
            }
            (None, Some(u), _) => {
                let _ = write!(out, "{u}");
            }
            (None, None, Some(f)) => out.push_str(&float_repr(f)),
            _ => out.push_str(&n.to_string()),
        },
        // serde_json escapes exactly what `ensure_ascii=False` escapes: `"`, `\` and the
        // control characters, with the same short forms and lowercase `\u00XX`.
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(style.item);
                }
                write_value(out, item, style);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            if style.sorted {
                // UTF-8 byte order is code point order, which is how Python sorts str keys.
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(style.item);
                }
                write_str(out, key);
                out.push_str(style.key);
                write_value(out, item, style);
            }
            out.push('}');
        }
    }
}

fn write_str(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).expect("a str always serializes"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_are_written_like_python_repr() {
        let value = json!([3.0, -0.0, 1e16, 0.00001, -2.5e-7, 0.1, 1e15]);
        assert_eq!(
            dumps(&value),
            "[3.0, -0.0, 1e+16, 1e-05, -2.5e-07, 0.1, 1000000000000000.0]"
        );
    }

    #[test]
    fn containers_use_python_separators_and_keep_unicode() {
        let value = json!({"a": [1, 2.0, null, true], "é": "x\"y\n\u{1}ü"});
        assert_eq!(
            dumps(&value),
            r#"{"a": [1, 2.0, null, true], "é": "x\"y\n\u0001ü"}"#
        );
        assert_eq!(
            dumps(&json!(18446744073709551615u64)),
            "18446744073709551615"
        );
        assert_eq!(dumps(&json!({})), "{}");
    }

    #[test]
    fn canonical_sorts_keys_and_drops_spaces() {
        let value = json!({"b": [1, 2.0, {"z": null, "é": 1, "a": "x y"}], "a": true});
        assert_eq!(
            canonical(&value),
            r#"{"a":true,"b":[1,2.0,{"a":"x y","z":null,"é":1}]}"#
        );
    }
}
