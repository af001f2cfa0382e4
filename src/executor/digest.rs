//! The digest that binds a person's approval to one exact call.
//!
//! A paused run shows each call awaiting approval with a digest: SHA-256 (lowercase hex) over
//! the tool's real name, one NUL byte, then the arguments as canonical JSON, exactly as
//! Python's `json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
//! writes them (see [`crate::render::pyjson::canonical`]), so anyone can check a digest.
//! Resuming re-prepares the call and computes the digest again; an approval counts only when
//! both agree, so a call whose name or arguments changed in between is never run on an
//! approval given for another one.

use crate::render::pyjson::canonical;
use serde_json::Value;

/// The digest of a call to `name` with `arguments`.
pub fn call_digest(name: &str, arguments: &Value) -> String {
    let arguments = canonical(arguments);
    crate::sha256::sha256_hex(&[name.as_bytes(), b"\0", arguments.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_matter_but_values_and_names_do() {
        let a = call_digest(
            "rm",
            &json!({"path": "/tmp/x", "force": {"b": 1, "a": [1, 2]}}),
        );
        let b = call_digest(
            "rm",
            &json!({"force": {"a": [1, 2], "b": 1}, "path": "/tmp/x"}),
        );
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        assert_ne!(
            a,
            call_digest(
                "rm",
                &json!({"path": "/tmp/y", "force": {"b": 1, "a": [1, 2]}})
            )
        );
        assert_ne!(
            a,
            call_digest(
                "rmdir",
                &json!({"path": "/tmp/x", "force": {"b": 1, "a": [1, 2]}})
            )
        );
    }

    #[test]
    fn the_digest_is_sha256_of_name_nul_and_canonical_json() {
        // sha256(b'delete\x00{"a":1,"b":"x"}'), by Python's hashlib
        let expected = "a8343199481df5cea1d821d54be301a0245213a348509eb8e52516782ef6387d";
        assert_eq!(call_digest("delete", &json!({"b": "x", "a": 1})), expected);
    }
}
