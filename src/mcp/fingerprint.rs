//! Tool-definition fingerprints, for pinning what a server is allowed to offer.
//!
//! A fingerprint is the lowercase hex SHA-256 of one canonical JSON text built from the tool
//! exactly as the server listed it: its remote `name`, its `description` and its
//! `inputSchema`, before any sanitizing, truncation or schema preparation. Any edit the server
//! makes to these three, including one past a display truncation or to characters the
//! sanitizer would strip, therefore changes the fingerprint.
//!
//! The canonical text, byte for byte:
//! - a JSON array of exactly three elements `[name, description, inputSchema]`; a
//!   description the server omitted is `null`, an omitted input schema is `null`;
//! - no whitespace anywhere: `[`, `]`, `{`, `}`, `,` and `:` are written bare;
//! - object keys sorted by their UTF-8 bytes (the same order as by Unicode code point), at
//!   every level; arrays keep their order;
//! - strings in double quotes, escaping only what JSON requires: `"` as `\"`, `\` as `\\`,
//!   U+0008 `\b`, U+000C `\f`, U+000A `\n`, U+000D `\r`, U+0009 `\t`, every other code point
//!   below U+0020 as `\u00XX` with lowercase hex; everything else (DEL, non-ASCII, U+2028)
//!   is written raw as UTF-8;
//! - `true`, `false`, `null`; integers in plain decimal (`-12`, `18446744073709551615`);
//!   other numbers in the shortest form that reads back to the same IEEE-754 double
//!   (serde_json 1.x / ryu formatting: `1.0`, `0.1`, `1e+20`, `-0.0`, `1.5e-7`); a JSON
//!   number the server wrote as `1.0` is a double and stays `1.0`, `1` stays `1`.
//!
//! Example: `name="t"`, `description="d"`, `inputSchema={"type":"object","properties":{}}`
//! hashes the 43 bytes `["t","d",{"properties":{},"type":"object"}]`.

use serde_json::Value;

/// SHA-256 of the canonical JSON text described in the module doc, as 64 lowercase hex digits.
pub fn fingerprint(name: &str, description: Option<&str>, input_schema: Option<&Value>) -> String {
    crate::sha256::sha256_hex(&[&canonical_text(name, description, input_schema)])
}

/// The canonical text: serde_json's compact writing (its string escaping and number formatting
/// are exactly the rules above; `None` is `null`, a tuple an array) of the triple, every object's
/// keys sorted first (a copy: the schema is at most `MAX_SCHEMA_BYTES`, checked before this runs).
fn canonical_text(name: &str, description: Option<&str>, schema: Option<&Value>) -> Vec<u8> {
    let mut schema = schema.cloned().unwrap_or_default();
    schema.sort_all_objects();
    serde_json::to_vec(&(name, description, schema)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The canonical JSON text described in the module doc.
    fn canonical(name: &str, description: Option<&str>, schema: Option<&Value>) -> String {
        String::from_utf8(canonical_text(name, description, schema)).unwrap()
    }

    #[test]
    fn canonical_text_is_sorted_and_compact() {
        let schema: Value = serde_json::from_str(
            r#"{"type": "object", "properties": {"b": {"type": "integer", "maximum": 1.0}, "a": {"description": "x\u0001\"é\u2028\u007f"}}, "required": ["b", "a"]}"#,
        )
        .unwrap();
        assert_eq!(
            canonical("t", Some("d"), Some(&schema)),
            "[\"t\",\"d\",{\"properties\":{\"a\":{\"description\":\"x\\u0001\\\"é\u{2028}\u{7f}\"},\"b\":{\"maximum\":1.0,\"type\":\"integer\"}},\"required\":[\"b\",\"a\"],\"type\":\"object\"}]"
        );
        assert_eq!(canonical("n", None, None), "[\"n\",null,null]");
    }

    #[test]
    fn numbers_keep_their_kind() {
        let v: Value =
            serde_json::from_str(r#"[1, 1.0, 1e20, -0.0, 0.1, 1.5e-7, 18446744073709551615, -5]"#)
                .unwrap();
        assert_eq!(
            canonical("n", None, Some(&v)),
            "[\"n\",null,[1,1.0,1e+20,-0.0,0.1,1.5e-7,18446744073709551615,-5]]"
        );
    }

    #[test]
    fn digest_matches_sha256_of_text() {
        let schema = json!({"type": "object", "properties": {}});
        let text = canonical("t", Some("d"), Some(&schema));
        assert_eq!(text, r#"["t","d",{"properties":{},"type":"object"}]"#);
        assert_eq!(text.len(), 43);
        // sha256 of those 43 bytes, by Python's hashlib
        let expected = "22bf9f36e4d29fe98565dc0ad0f4edb2209a218eace46a4bee227a925d2f4042";
        assert_eq!(fingerprint("t", Some("d"), Some(&schema)), expected);
    }

    #[test]
    fn any_change_changes_it() {
        let s = json!({"type": "object"});
        let base = fingerprint("t", Some("d"), Some(&s));
        assert_ne!(base, fingerprint("t", Some("d\u{202e}"), Some(&s)));
        assert_ne!(base, fingerprint("t", None, Some(&s)));
        assert_ne!(base, fingerprint("t", Some(""), Some(&s)));
        assert_ne!(base, fingerprint("t", Some("d"), None));
        assert_ne!(base, fingerprint("u", Some("d"), Some(&s)));
        let long_a = "a".repeat(10_000);
        let long_b = format!("{}b", "a".repeat(9_999));
        assert_ne!(
            fingerprint("t", Some(&long_a), None),
            fingerprint("t", Some(&long_b), None)
        );
        // Key order as sent does not matter.
        let a: Value = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
        assert_eq!(
            fingerprint("t", None, Some(&a)),
            fingerprint("t", None, Some(&b))
        );
    }
}
