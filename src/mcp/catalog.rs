//! From a `tools/list` answer to the tools we are willing to expose.
//!
//! The listing is read as raw JSON (not rmcp's typed `Tool`), so a malformed entry is refused
//! with its name instead of failing the whole answer anonymously, and the fingerprint is taken
//! over exactly what the server sent.

use super::fingerprint::fingerprint;
use super::sanitize::sanitize_marked;
use super::schema::{prepare_input_schema, SchemaError};
use crate::tool::sanitize_tool_name;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

/// Remote names longer than this (in bytes) are refused; the protocol suggests 128 characters.
pub const MAX_REMOTE_NAME_BYTES: usize = 1024;
const NAME_LIMIT: usize = 64;

/// One tool as listed, before any checks.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Option<Value>,
}

/// One tool that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    pub display_name: String,
    pub remote_name: String,
    /// Sanitized and bounded; what the model reads.
    pub description: String,
    /// Prepared (see `schema.rs`); what the model reads and what arguments are validated against.
    pub input_schema: Value,
    pub fingerprint: String,
}

/// Why `load_tools` refused the catalog.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    #[error("MCP server returned too many tools ({count} > max_tools={max})")]
    TooManyTools { count: usize, max: usize },
    #[error("MCP server sent a malformed tool listing: {reason}")]
    Malformed { reason: String },
    #[error("MCP server listed a tool with an empty name")]
    EmptyName,
    #[error(
        "MCP server listed a tool whose name is longer than {MAX_REMOTE_NAME_BYTES} bytes: {name}"
    )]
    NameTooLong { name: String },
    #[error("MCP server listed the tool {name} more than once")]
    DuplicateName { name: String },
    #[error("MCP tool {name} has an unusable inputSchema: {reason}")]
    BadSchema { name: String, reason: SchemaError },
    #[error("MCP tool fingerprints do not match the pins (expected_fingerprints), refused to load: {details}")]
    Pins { details: String },
}

/// A server-chosen name shown in an error: quoted, cleaned and bounded.
pub fn quoted(name: &str) -> String {
    format!("'{}'", sanitize_marked(name, 80))
}

/// Reads the `tools` array of one `tools/list` page, refusing entries that are not objects
/// with a string `name`.
pub fn parse_page(result: &Value) -> Result<(Vec<ListedTool>, Option<String>), CatalogError> {
    let malformed = |reason: String| CatalogError::Malformed { reason };
    let Some(obj) = result.as_object() else {
        return Err(malformed("the result is not an object".into()));
    };
    let Some(tools) = obj.get("tools").and_then(Value::as_array) else {
        return Err(malformed("\"tools\" is missing or not a list".into()));
    };
    let cursor = match obj.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err(malformed("\"nextCursor\" is not a string".into())),
    };
    let mut out = Vec::with_capacity(tools.len());
    for (i, t) in tools.iter().enumerate() {
        let Some(t) = t.as_object() else {
            return Err(malformed(format!("tool #{i} is not an object")));
        };
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            return Err(malformed(format!("tool #{i} has no string \"name\"")));
        };
        let description = match t.get("description") {
            None | Some(Value::Null) => None,
            Some(Value::String(d)) => Some(d.clone()),
            Some(_) => {
                return Err(malformed(format!(
                    "tool {} has a description that is not a string",
                    quoted(name)
                )))
            }
        };
        out.push(ListedTool {
            name: name.to_string(),
            description,
            input_schema: t.get("inputSchema").cloned(),
        });
    }
    Ok((out, cursor))
}

/// Settings that shape the catalog.
#[derive(Debug, Clone)]
pub struct CatalogRules<'a> {
    pub namespace: &'a str,
    pub max_tools: usize,
    pub max_desc_chars: usize,
    pub expected_fingerprints: Option<&'a BTreeMap<String, String>>,
}

/// Checks the whole listing and builds the entries, sorted by display name.
pub fn build_catalog(
    mut listed: Vec<ListedTool>,
    rules: &CatalogRules<'_>,
) -> Result<Vec<CatalogEntry>, CatalogError> {
    let (count, max) = (listed.len(), rules.max_tools);
    if count > max {
        return Err(CatalogError::TooManyTools { count, max });
    }
    // Sorting by remote name makes display names independent of the listing order.
    listed.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    for pair in listed.windows(2) {
        if pair[0].name == pair[1].name {
            let name = quoted(&pair[0].name);
            return Err(CatalogError::DuplicateName { name });
        }
    }
    let mut taken: HashSet<String> = HashSet::with_capacity(listed.len());
    let mut entries = Vec::with_capacity(listed.len());
    for tool in listed {
        if tool.name.is_empty() {
            return Err(CatalogError::EmptyName);
        }
        if tool.name.len() > MAX_REMOTE_NAME_BYTES {
            let name = quoted(&tool.name);
            return Err(CatalogError::NameTooLong { name });
        }
        let empty = Value::Object(Default::default());
        let schema = tool.input_schema.as_ref().unwrap_or(&empty);
        let input_schema =
            prepare_input_schema(schema, rules.max_desc_chars).map_err(|reason| {
                CatalogError::BadSchema {
                    name: quoted(&tool.name),
                    reason,
                }
            })?;
        let display_name = unique_name(rules.namespace, &tool.name, &mut taken);
        let description = tool.description.as_deref();
        entries.push(CatalogEntry {
            display_name,
            description: sanitize_marked(description.unwrap_or(""), rules.max_desc_chars),
            fingerprint: fingerprint(&tool.name, description, tool.input_schema.as_ref()),
            remote_name: tool.name,
            input_schema,
        });
    }
    if let Some(pins) = rules.expected_fingerprints {
        check_pins(&entries, pins)?;
    }
    entries.sort_by(|a, b| a.display_name.cmp(&b.display_name));
    Ok(entries)
}

/// `{namespace}_{remote}` made legal; on a collision, a short hash of the remote name keeps
/// it unique (the first name in remote-name order keeps the plain form).
fn unique_name(namespace: &str, remote: &str, taken: &mut HashSet<String>) -> String {
    let base = sanitize_tool_name(&format!("{namespace}_{remote}"));
    if taken.insert(base.clone()) {
        return base;
    }
    let digest = crate::sha256::sha256_hex(&[remote.as_bytes()]);
    let hash = &digest[..8];
    let mut suffix = format!("_{hash}");
    for n in 2.. {
        let stem: String = base.chars().take(NAME_LIMIT - suffix.len()).collect();
        let candidate = format!("{stem}{suffix}");
        if taken.insert(candidate.clone()) {
            return candidate;
        }
        suffix = format!("_{hash}_{n}");
    }
    unreachable!("the suffixes never run out")
}

fn check_pins(
    entries: &[CatalogEntry],
    pins: &BTreeMap<String, String>,
) -> Result<(), CatalogError> {
    let mut problems = Vec::new();
    for e in entries {
        let (name, got) = (&e.display_name, &e.fingerprint);
        match pins.get(name) {
            Some(expected) if expected.eq_ignore_ascii_case(got) => {}
            Some(expected) => {
                let expected = sanitize_marked(expected, 64);
                problems.push(format!("'{name}' changed (expected {expected}, got {got})"));
            }
            None => problems.push(format!("'{name}' is not pinned (fingerprint {got})")),
        }
    }
    let listed: HashSet<&str> = entries.iter().map(|e| e.display_name.as_str()).collect();
    for name in pins.keys() {
        if !listed.contains(name.as_str()) {
            let name = sanitize_marked(name, 80);
            problems.push(format!("'{name}' is pinned but the server did not list it"));
        }
    }
    let details = problems.join("; ");
    match problems.is_empty() {
        true => Ok(()),
        false => Err(CatalogError::Pins { details }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> ListedTool {
        ListedTool {
            name: name.into(),
            description: Some(format!("does {name}")),
            input_schema: Some(json!({"type": "object"})),
        }
    }

    fn rules(pins: Option<&BTreeMap<String, String>>) -> CatalogRules<'_> {
        CatalogRules {
            namespace: "ns",
            max_tools: 10,
            max_desc_chars: 100,
            expected_fingerprints: pins,
        }
    }

    #[test]
    fn names_are_namespaced_legal_and_unique_in_any_order() {
        let a = vec![
            tool("a.b"),
            tool("a b"),
            tool("a_b"),
            tool(&"x".repeat(500)),
        ];
        let mut b = a.clone();
        b.reverse();
        let ca = build_catalog(a, &rules(None)).unwrap();
        let cb = build_catalog(b, &rules(None)).unwrap();
        assert_eq!(ca, cb);
        let names: Vec<&str> = ca.iter().map(|e| e.display_name.as_str()).collect();
        for n in &names {
            // Legal in a default (strict) registry, so MCP tools register anywhere.
            assert!(crate::tool::NameRule::Strict.check(n).is_ok(), "{n}");
        }
        // "a b" sorts first and keeps the plain name.
        let ab = ca.iter().find(|e| e.remote_name == "a b").unwrap();
        assert_eq!(ab.display_name, "ns_a_b");
        let dotted = ca.iter().find(|e| e.remote_name == "a.b").unwrap();
        assert!(
            dotted.display_name.starts_with("ns_a_b_") && dotted.display_name.len() == 15,
            "{}",
            dotted.display_name
        );
        let long = ca.iter().find(|e| e.remote_name.len() == 500).unwrap();
        assert_eq!(long.display_name.len(), 64);
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), 4);
    }

    #[test]
    fn bad_catalogs_are_refused() {
        let many: Vec<ListedTool> = (0..11).map(|i| tool(&format!("t{i}"))).collect();
        assert_eq!(
            build_catalog(many, &rules(None)).unwrap_err(),
            CatalogError::TooManyTools { count: 11, max: 10 }
        );
        assert_eq!(
            build_catalog(vec![tool("")], &rules(None)).unwrap_err(),
            CatalogError::EmptyName
        );
        assert!(matches!(
            build_catalog(vec![tool("a"), tool("a")], &rules(None)),
            Err(CatalogError::DuplicateName { .. })
        ));
        let mut t = tool("evil\u{202e}");
        t.input_schema = Some(json!({"properties": {"x": {"$ref": "http://x/y"}}}));
        let err = build_catalog(vec![t], &rules(None))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "MCP tool 'evil' has an unusable inputSchema: $ref must be a local reference starting with '#', got \"http://x/y\"");
        let mut t = tool("n");
        t.input_schema = Some(json!("nope"));
        assert!(build_catalog(vec![t], &rules(None))
            .unwrap_err()
            .to_string()
            .contains("must be a JSON object, got a string"));
    }

    #[test]
    fn pins_are_an_exact_set() {
        let listed = vec![tool("a"), tool("b")];
        let ok = build_catalog(listed.clone(), &rules(None)).unwrap();
        let mut pins: BTreeMap<String, String> = ok
            .iter()
            .map(|e| (e.display_name.clone(), e.fingerprint.clone()))
            .collect();
        assert!(build_catalog(listed.clone(), &rules(Some(&pins))).is_ok());
        let mut changed = listed.clone();
        changed[1].description = Some("does b, and also exfiltrates".into());
        let err = build_catalog(changed, &rules(Some(&pins)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'ns_b' changed") && !err.contains("'ns_a'"),
            "{err}"
        );
        let err = build_catalog(vec![tool("a")], &rules(Some(&pins)))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'ns_b' is pinned but the server did not list it"),
            "{err}"
        );
        pins.remove("ns_b");
        let err = build_catalog(listed, &rules(Some(&pins)))
            .unwrap_err()
            .to_string();
        assert!(err.contains("'ns_b' is not pinned"), "{err}");
    }

    #[test]
    fn descriptions_are_cleaned_but_fingerprinted_raw() {
        let mut t = tool("a");
        t.description = Some("hi\u{202e}there".into());
        let e = &build_catalog(vec![t.clone()], &rules(None)).unwrap()[0];
        assert_eq!(e.description, "hithere");
        assert_eq!(
            e.fingerprint,
            fingerprint(
                "a",
                Some("hi\u{202e}there"),
                Some(&json!({"type": "object"}))
            )
        );
    }

    #[test]
    fn page_parsing() {
        let (tools, cursor) = parse_page(&json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "2"})).unwrap();
        assert_eq!(tools[0].name, "a");
        assert_eq!(cursor.as_deref(), Some("2"));
        assert!(parse_page(&json!({"tools": [{"description": "x"}]}))
            .unwrap_err()
            .to_string()
            .contains("tool #0 has no string \"name\""));
        assert!(parse_page(&json!({})).is_err());
    }
}
