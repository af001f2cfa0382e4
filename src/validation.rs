//! Argument validation: one compiled JSON Schema validator per tool, built at registration.

use serde_json::Value;

/// At most this many problems are reported for one call; a model that sends garbage does not
/// need a thousand lines back.
const MAX_ISSUES: usize = 20;
/// Offending values are echoed back to the model; a 1 MB string must not be.
const MAX_MESSAGE_CHARS: usize = 300;

/// One problem with the arguments, located by a dotted path (`items.0.name`; empty for the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub path: String,
    pub message: String,
}

impl Issue {
    /// `parameter 'a.b': message`, or the bare message for a problem with the whole object.
    pub fn render(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("parameter '{}': {}", self.path, self.message)
        }
    }
}

/// A compiled validator for one root schema.
pub struct SchemaValidator {
    inner: jsonschema::Validator,
    /// The root's `properties` names, sorted (None without `properties`): every call asks
    /// whether its arguments hold a key the schema does not name, and a search of this is
    /// cheaper than hashing each key into the schema's map.
    names: Option<Box<[Box<str>]>>,
}

impl std::fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SchemaValidator")
    }
}

impl SchemaValidator {
    /// Compiles `schema` (Draft 2020-12 unless it says otherwise). Formats such as `date-time`
    /// and `uuid` are checked, so a bad date is reported with its path instead of failing later
    /// inside the conversion code. Remote `$ref`s cannot resolve: no retriever is compiled in.
    pub fn compile(schema: &Value) -> Result<SchemaValidator, String> {
        check_root(schema)?;
        jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .map(|inner| SchemaValidator {
                inner,
                names: property_names(schema),
            })
            .map_err(|e| truncate(&e.to_string(), 500))
    }

    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }

    /// Whether `args` (an object) has a top-level key the root's `properties` do not name;
    /// false when the root has no `properties` or `args` is not an object.
    pub fn has_unknown_key(&self, args: &Value) -> bool {
        let (Some(names), Some(map)) = (&self.names, args.as_object()) else {
            return false;
        };
        map.keys()
            .any(|k| names.binary_search_by(|n| (**n).cmp(k.as_str())).is_err())
    }

    /// Every problem (up to a cap), sorted by path so the report is stable.
    pub fn issues(&self, instance: &Value) -> Vec<Issue> {
        let mut issues: Vec<Issue> = self
            .inner
            .iter_errors(instance)
            .take(MAX_ISSUES)
            .map(|err| {
                let mut path = dotted(err.instance_path().as_str());
                let message = match err.kind() {
                    jsonschema::error::ValidationErrorKind::Required { property } => {
                        let prop = property
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| property.to_string());
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(&prop);
                        "is required but missing".to_string()
                    }
                    _ => shortened(&err),
                };
                Issue { path, message }
            })
            .collect();
        issues.sort_by(|a, b| a.path.cmp(&b.path));
        issues.dedup();
        issues
    }
}

/// A problem's message, at most [`MAX_MESSAGE_CHARS`]. Most messages start with the offending
/// value; a long value is cut there, so the reason after it ("has more than 100 items") is
/// never what gets lost.
fn shortened(err: &jsonschema::ValidationError<'_>) -> String {
    let full = err.to_string();
    if full.chars().count() <= MAX_MESSAGE_CHARS {
        return full;
    }
    let shown = err.instance().to_string();
    match full.strip_prefix(shown.as_str()) {
        Some(reason) => truncate(
            &format!("{}{reason}", truncate(&shown, 80)),
            MAX_MESSAGE_CHARS,
        ),
        None => truncate(&full, MAX_MESSAGE_CHARS),
    }
}

/// The cheap checks of a root schema: a JSON object of type object that is valid against its
/// meta-schema (so `"type": "nonsense"` or `"required": 5` are caught). About 30 times cheaper
/// than compiling, which is why registration runs this and compiles on first use.
pub fn check_root(schema: &Value) -> Result<(), String> {
    if !schema.is_object() {
        return Err("the root schema must be a JSON object".into());
    }
    if let Some(t) = schema.get("type") {
        if t != "object" {
            return Err(format!(
                "the root schema must have \"type\": \"object\", got {t}"
            ));
        }
    }
    // A `$schema` naming no draft the validator knows would make the meta-schema lookup panic:
    // refused here (remote meta-schemas are never fetched).
    if jsonschema::Draft::default().detect(schema) == jsonschema::Draft::Unknown {
        let uri = schema
            .get("$schema")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(format!(
            "its \"$schema\" {:?} names no JSON Schema draft supported here \
             (draft 4, 6, 7, 2019-09 or 2020-12)",
            truncate(uri, 100)
        ));
    }
    // `is_valid` builds no error values; the error text is only made for a schema that fails.
    if jsonschema::meta::is_valid(schema) {
        return Ok(());
    }
    jsonschema::meta::validate(schema)
        .map_err(|e| truncate(&format!("it is not a valid JSON Schema: {e}"), 500))
}

/// `Error: tool 'x' failed parameter validation: parameter 'a': ...; parameter 'b': ...`
pub fn render_failure(tool: &str, issues: &[Issue]) -> String {
    let parts: Vec<String> = issues.iter().map(Issue::render).collect();
    validation_failed(tool, &parts.join("; "))
}

/// The validation error text around `detail` (what failed, and where).
pub fn validation_failed(tool: &str, detail: &str) -> String {
    format!("Error: tool '{tool}' failed parameter validation: {detail}")
}

/// JSON pointer `/a/0/b~1c` to dotted `a.0.b/c`.
fn dotted(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(|seg| seg.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

fn property_names(schema: &Value) -> Option<Box<[Box<str>]>> {
    let props = schema.get("properties")?.as_object()?;
    let mut names: Vec<Box<str>> = props.keys().map(|k| k.as_str().into()).collect();
    names.sort_unstable();
    Some(names.into_boxed_slice())
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    let mut text = text.to_string();
    truncate_from(&mut text, 0, max_chars);
    text
}

/// Cuts what `text` holds from byte `start` on to `max_chars` characters, marked with `…`, as
/// [`truncate`] does (for a text written in parts, each part cut to its own length).
pub(crate) fn truncate_from(text: &mut String, start: usize, max_chars: usize) {
    if let Some((at, _)) = text[start..].char_indices().nth(max_chars) {
        text.truncate(start + at);
        text.push('…');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}},
                "action": {"enum": ["read", "append"]},
                "when": {"type": "string", "format": "date"}
            },
            "required": ["city"]
        })
    }

    #[test]
    fn an_unknown_meta_schema_is_refused_without_panicking() {
        for uri in ["http://evil.example/meta.json", "#", "urn:x"] {
            let err = check_root(&json!({"type": "object", "$schema": uri})).unwrap_err();
            assert!(
                err.contains("names no JSON Schema draft supported here"),
                "{err}"
            );
        }
        let err = check_root(&json!({"type": "object", "$schema": 5})).unwrap_err();
        assert!(err.contains("it is not a valid JSON Schema"), "{err}");
        assert!(check_root(
            &json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"})
        )
        .is_ok());
    }

    #[test]
    fn valid_arguments_pass() {
        let v = SchemaValidator::compile(&schema()).unwrap();
        assert!(v.is_valid(&json!({"city": "Paris", "days": 3, "extra": 1})));
        assert!(v.issues(&json!({"city": "Paris"})).is_empty());
    }

    #[test]
    fn unknown_keys_are_those_the_roots_properties_do_not_name() {
        let v = SchemaValidator::compile(&schema()).unwrap();
        assert!(!v.has_unknown_key(&json!({"city": "Paris", "when": "x", "action": 1})));
        assert!(v.has_unknown_key(&json!({"city": "Paris", "extra": 1})));
        assert!(
            v.has_unknown_key(&json!({"n": "a"})),
            "a nested property is not the root's"
        );
        assert!(!v.has_unknown_key(&json!({})) && !v.has_unknown_key(&json!([1])));
        let open = SchemaValidator::compile(&json!({"type": "object"})).unwrap();
        assert!(!open.has_unknown_key(&json!({"anything": 1})));
    }

    #[test]
    fn every_problem_has_its_path() {
        let v = SchemaValidator::compile(&schema()).unwrap();
        let issues = v.issues(&json!({"days": "x", "items": [{"n": "a"}, {}], "action": "delete", "when": "2024-13-99"}));
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["action", "city", "days", "items.1.n", "when"]);
        let text = render_failure("weather", &issues);
        assert!(
            text.starts_with(
                "Error: tool 'weather' failed parameter validation: parameter 'action': "
            ),
            "{text}"
        );
        assert!(
            text.contains("parameter 'city': is required but missing"),
            "{text}"
        );
        assert!(
            text.contains("parameter 'items.1.n': is required but missing"),
            "{text}"
        );
        assert!(text.contains("\"x\" is not of type \"integer\""), "{text}");
    }

    #[test]
    fn huge_values_are_not_echoed_whole() {
        let v = SchemaValidator::compile(&schema()).unwrap();
        let issues = v.issues(&json!({"city": 5, "days": "y".repeat(100_000)}));
        assert!(issues
            .iter()
            .all(|i| i.message.chars().count() <= MAX_MESSAGE_CHARS + 1));
        let list =
            json!({"type": "object", "properties": {"xs": {"type": "array", "maxItems": 3}}});
        let list = SchemaValidator::compile(&list).unwrap();
        let issues = list.issues(&json!({"xs": vec!["many words in every item"; 50]}));
        assert!(
            issues[0]
                .message
                .ends_with("\u{2026} has more than 3 items"),
            "{}",
            issues[0].message
        );
    }

    #[test]
    fn bad_schemas_are_refused_at_compile_time() {
        assert!(SchemaValidator::compile(
            &json!({"type": "object", "properties": {"a": {"type": "nonsense"}}})
        )
        .is_err());
        assert!(SchemaValidator::compile(&json!([1])).is_err());
        assert!(SchemaValidator::compile(&json!({"type": "string"})).is_err());
    }

    #[test]
    fn dotted_paths_unescape_pointer_tokens() {
        assert_eq!(dotted(""), "");
        assert_eq!(dotted("/a/0/b~1c/d~0e"), "a.0.b/c.d~e");
    }
}
