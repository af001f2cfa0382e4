//! The tool registry: tools keyed by name in registration order, each with its schema, compiled
//! validator and renderings prepared once at registration.
//!
//! The registry is generic over the payload that says how to run a tool, so the core can hold
//! Rust tools and the binding can hold Python objects with the same rules.

use crate::error::RegistrationError;
use crate::null_optional::drop_null_optionals;
use crate::schema::{check_parameters, describe_tool, openai_function};
use crate::tool::{check_tool_name, ToolSpec};
use crate::validation::{check_root, render_failure, truncate, SchemaValidator};
use indexmap::IndexMap;
use serde_json::Value;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

/// Text used when a rendering selects no tools.
pub const EMPTY_CATALOG: &str = "(no tools available)";
/// Up to this many registered names are listed when the model asks for an unknown tool;
/// past it only the closest names are suggested.
const LIST_ALL_NAMES_UP_TO: usize = 20;
const SUGGESTIONS: usize = 5;

/// A registered tool with everything derivable from its spec computed once.
#[derive(Debug)]
pub struct Entry<T> {
    pub spec: ToolSpec,
    /// The root schema: what the model sees and what the validator is compiled from (a root
    /// schema given in `spec.input_schema` is moved here).
    pub schema: Value,
    /// Compiled on first use, then kept: compiling costs ~15 µs a schema, which would make
    /// registering thousands of tools slow for tools that are never called. Registration has
    /// already checked the schema against its meta-schema.
    validator: OnceLock<Result<SchemaValidator, String>>,

    /// The `get_tools_description` block, rendered on first use.
    description_block: OnceLock<String>,
    pub payload: T,
}

impl<T> Entry<T> {
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The OpenAI `tools` entry (built when asked for: the binding renders its Python form
    /// straight from `schema`).
    pub fn openai(&self) -> Value {
        openai_function(&self.spec.name, &self.spec.description, &self.schema)
    }

    /// The `get_tools_description` block for this tool.
    pub fn description_block(&self) -> &str {
        self.description_block
            .get_or_init(|| describe_tool(&self.spec.name, &self.spec.description, &self.schema))
    }

    /// The compiled validator (compiled now if this is the first use).
    pub fn validator(&self) -> Result<&SchemaValidator, String> {
        self.validator
            .get_or_init(|| SchemaValidator::compile(&self.schema))
            .as_ref()
            .map_err(|reason| {
                format!(
                    "Error: tool '{}' has an input schema that cannot be compiled: {reason}",
                    self.spec.name
                )
            })
    }

    /// Validates `args`; on failure, the error text for the model. A `null` sent for an
    /// optional property whose schema refuses null (what OpenAI's strict rendering lets the
    /// model send for "use the default") is removed from `args` first; `Ok(true)` says that
    /// happened, so the caller hands the tool the pruned arguments. Arguments that validate as
    /// they are cost nothing more.
    pub fn check_args(&self, args: &mut Value) -> Result<bool, String> {
        let validator = self.validator()?;
        if validator.is_valid(args) {
            return Ok(false);
        }
        let pruned = drop_null_optionals(&self.schema, args);
        if pruned && validator.is_valid(args) {
            return Ok(true);
        }
        let issues = validator.issues(args);
        Err(render_failure(&self.spec.name, &issues))
    }
}

/// What `register_all` does when a name is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictMode {
    /// Refuse the whole batch; nothing is registered.
    Raise,
    /// Keep the existing tool and leave the new one out.
    Skip,
    /// Replace the existing tool, keeping its position.
    Overwrite,
}

impl FromStr for ConflictMode {
    type Err = RegistrationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            // "error" is the reference implementation's spelling; both mean the same.
            "raise" | "error" => Ok(ConflictMode::Raise),
            "skip" => Ok(ConflictMode::Skip),
            "overwrite" => Ok(ConflictMode::Overwrite),
            other => Err(RegistrationError::ConflictMode {
                got: other.to_string(),
            }),
        }
    }
}

#[derive(Debug)]
pub struct Registry<T> {
    entries: IndexMap<String, Arc<Entry<T>>>,
    /// Bumped on every change, so renderings cached by callers know when to rebuild.
    version: u64,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            entries: IndexMap::new(),
            version: 0,
        }
    }
}

impl<T> Registry<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks a spec and builds its entry without touching the registry.
    pub fn prepare(mut spec: ToolSpec, payload: T) -> Result<Entry<T>, RegistrationError> {
        check_tool_name(&spec.name)?;
        if spec.input_schema.is_none() {
            check_parameters(&spec.parameters).map_err(|reason| {
                RegistrationError::InvalidParameters {
                    name: spec.name.clone(),
                    reason,
                }
            })?;
        }
        // A given root schema is moved, not copied: `spec.input_schema` is left empty and
        // `Entry::schema` is the one place the schema lives.
        let (schema, synthesized) = match spec.input_schema.take() {
            Some(schema) => (schema, false),
            None => (crate::schema::root_schema(&spec.parameters), true),
        };
        // A schema synthesized from plain parameters is well-formed by construction once its
        // type words are JSON Schema types; anything hand-written is checked against the
        // meta-schema.
        let plain = synthesized
            && spec
                .parameters
                .iter()
                .all(|p| p.schema.is_none() && is_type_word(&p.type_));
        if !plain {
            check_root(&schema).map_err(|reason| RegistrationError::InvalidSchema {
                name: spec.name.clone(),
                reason,
            })?;
        }
        let validator = OnceLock::new();
        if needs_eager_compile(&schema) {
            // References and regexes can only be checked by compiling; a schema that has them
            // is compiled now, so a dangling `$ref` or a bad pattern fails at registration.
            let compiled = SchemaValidator::compile(&schema).map_err(|reason| {
                RegistrationError::InvalidSchema {
                    name: spec.name.clone(),
                    reason,
                }
            })?;
            let _ = validator.set(Ok(compiled));
        }

        Ok(Entry {
            spec,
            schema,
            validator,
            description_block: OnceLock::new(),
            payload,
        })
    }

    pub fn register(&mut self, entry: Entry<T>, overwrite: bool) -> Result<(), RegistrationError> {
        let name = entry.spec.name.clone();
        if !overwrite && self.entries.contains_key(&name) {
            return Err(RegistrationError::Duplicate { name });
        }
        // IndexMap::insert keeps the original position of a replaced key.
        self.entries.insert(name, Arc::new(entry));
        self.version += 1;
        Ok(())
    }

    /// Registers a batch atomically: if any entry is refused, the registry is left exactly as it
    /// was. Returns the names actually registered, in order.
    pub fn register_all(
        &mut self,
        entries: Vec<Entry<T>>,
        mode: ConflictMode,
    ) -> Result<Vec<String>, RegistrationError> {
        let mut taken: std::collections::HashSet<&str> =
            self.entries.keys().map(String::as_str).collect();
        let mut keep = Vec::with_capacity(entries.len());
        for entry in &entries {
            let name = entry.spec.name.as_str();
            let conflict = !taken.insert(name);
            match (conflict, mode) {
                (true, ConflictMode::Raise) => {
                    return Err(RegistrationError::Duplicate {
                        name: name.to_string(),
                    });
                }
                (true, ConflictMode::Skip) => keep.push(false),
                _ => keep.push(true),
            }
        }
        let mut registered = Vec::new();
        for (entry, keep) in entries.into_iter().zip(keep) {
            if keep {
                registered.push(entry.spec.name.clone());
                self.entries
                    .insert(entry.spec.name.clone(), Arc::new(entry));
            }
        }
        if !registered.is_empty() {
            self.version += 1;
        }
        Ok(registered)
    }

    pub fn unregister(&mut self, name: &str) -> Option<Arc<Entry<T>>> {
        let removed = self.entries.shift_remove(name);
        if removed.is_some() {
            self.version += 1;
        }
        removed
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Entry<T>>> {
        self.entries.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Arc<Entry<T>>> {
        self.entries.values()
    }

    /// `None` selects every tool in registration order; a list selects those names in its own
    /// order, first occurrence wins, unknown names are skipped.
    pub fn select<S: AsRef<str>>(&self, names: Option<&[S]>) -> Vec<&Arc<Entry<T>>> {
        match names {
            None => self.entries.values().collect(),
            Some(names) => {
                let mut seen = std::collections::HashSet::with_capacity(names.len());
                let mut out = Vec::with_capacity(names.len());
                for name in names {
                    let name = name.as_ref();
                    if seen.insert(name) {
                        if let Some(entry) = self.entries.get(name) {
                            out.push(entry);
                        }
                    }
                }
                out
            }
        }
    }

    /// One line per tool: `- name: description`.
    pub fn catalog<S: AsRef<str>>(&self, names: Option<&[S]>) -> String {
        let selected = self.select(names);
        if selected.is_empty() {
            return EMPTY_CATALOG.to_string();
        }
        let lines: Vec<String> = selected
            .iter()
            .map(|e| format!("- {}: {}", e.spec.name, e.spec.description))
            .collect();
        lines.join("\n")
    }

    pub fn tools_description<S: AsRef<str>>(&self, names: Option<&[S]>) -> String {
        let selected = self.select(names);
        if selected.is_empty() {
            return EMPTY_CATALOG.to_string();
        }
        let blocks: Vec<&str> = selected.iter().map(|e| e.description_block()).collect();
        blocks.join("\n")
    }

    pub fn openai_schema<S: AsRef<str>>(&self, names: Option<&[S]>) -> Vec<Value> {
        self.select(names).into_iter().map(|e| e.openai()).collect()
    }

    /// The error text for a call to a tool that is not registered. It lists every name only for
    /// small registries; otherwise it suggests the closest names, so a registry of thousands of
    /// tools does not flood the model. `visible` hides tools the caller may not reveal
    /// (for example those denied by permissions).
    pub fn unknown_tool_message(&self, name: &str, visible: &dyn Fn(&Entry<T>) -> bool) -> String {
        let shown = truncate(name, 64);
        let candidates: Vec<&str> = self
            .entries
            .values()
            .filter(|e| visible(e))
            .map(|e| e.spec.name.as_str())
            .collect();
        if candidates.is_empty() {
            return format!("Error: tool '{shown}' does not exist. No tools are available.");
        }
        if candidates.len() <= LIST_ALL_NAMES_UP_TO {
            return format!(
                "Error: tool '{shown}' does not exist. Available tools: {}.",
                candidates.join(", ")
            );
        }
        let needle: Vec<char> = name.chars().take(64).flat_map(char::to_lowercase).collect();
        let mut scored: Vec<(usize, &str)> = candidates
            .iter()
            .map(|c| {
                let hay: Vec<char> = c.chars().flat_map(char::to_lowercase).collect();
                (edit_distance(&needle, &hay), *c)
            })
            .collect();
        scored.sort();
        let close: Vec<&str> = scored.iter().take(SUGGESTIONS).map(|(_, n)| *n).collect();
        format!(
            "Error: tool '{shown}' does not exist. Closest names: {}. ({} tools are available; use an exact name.)",
            close.join(", "),
            candidates.len()
        )
    }
}

fn is_type_word(word: &str) -> bool {
    matches!(
        word,
        "string" | "integer" | "number" | "boolean" | "array" | "object" | "null"
    )
}

/// Whether a schema uses keywords the meta-schema check cannot vouch for: references (they must
/// resolve) and regular expressions (they must parse).
fn needs_eager_compile(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.iter().any(|(k, v)| {
            matches!(
                k.as_str(),
                "$ref" | "$dynamicRef" | "pattern" | "patternProperties"
            ) || needs_eager_compile(v)
        }),
        Value::Array(items) => items.iter().any(needs_eager_compile),
        _ => false,
    }
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ToolParameter;
    use serde_json::json;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec::new(
            name,
            format!("{name} tool"),
            vec![ToolParameter::new("x", "integer", "An x")],
        )
    }

    fn entry(name: &str, payload: u32) -> Entry<u32> {
        Registry::prepare(spec(name), payload).unwrap()
    }

    #[test]
    fn register_get_unregister_keep_order() {
        let mut r = Registry::new();
        r.register(entry("b", 1), false).unwrap();
        r.register(entry("a", 2), false).unwrap();
        r.register(entry("c", 3), false).unwrap();
        assert_eq!(r.names().collect::<Vec<_>>(), ["b", "a", "c"]);
        r.register(entry("a", 9), true).unwrap();
        assert_eq!(
            r.names().collect::<Vec<_>>(),
            ["b", "a", "c"],
            "overwrite keeps position"
        );
        assert_eq!(r.get("a").unwrap().payload, 9);
        assert_eq!(r.unregister("b").unwrap().payload, 1);
        assert!(r.unregister("b").is_none());
        assert_eq!(r.names().collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn duplicates_and_bad_names_are_refused() {
        let mut r = Registry::new();
        r.register(entry("a", 1), false).unwrap();
        let err = r.register(entry("a", 2), false).unwrap_err();
        assert!(matches!(err, RegistrationError::Duplicate { .. }));
        assert!(err.to_string().contains("overwrite=True"));
        assert!(matches!(
            Registry::prepare(spec("calc\n"), 0).unwrap_err(),
            RegistrationError::IllegalName { .. }
        ));
        assert_eq!(r.get("a").unwrap().payload, 1);
    }

    #[test]
    fn register_all_is_atomic_on_conflict() {
        let mut r = Registry::new();
        r.register(entry("a", 1), false).unwrap();
        let v = r.version();
        let err = r
            .register_all(vec![entry("b", 2), entry("a", 3)], ConflictMode::Raise)
            .unwrap_err();
        assert!(matches!(err, RegistrationError::Duplicate { ref name } if name == "a"));
        assert_eq!(r.names().collect::<Vec<_>>(), ["a"]);
        assert_eq!(r.version(), v);
        let err = r
            .register_all(vec![entry("b", 2), entry("b", 3)], ConflictMode::Raise)
            .unwrap_err();
        assert!(
            matches!(err, RegistrationError::Duplicate { .. }),
            "duplicates inside the batch too"
        );
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn register_all_skip_and_overwrite() {
        let mut r = Registry::new();
        r.register(entry("a", 1), false).unwrap();
        let got = r
            .register_all(vec![entry("a", 2), entry("b", 3)], ConflictMode::Skip)
            .unwrap();
        assert_eq!(got, ["b"]);
        assert_eq!(r.get("a").unwrap().payload, 1);
        let got = r
            .register_all(vec![entry("a", 4)], ConflictMode::Overwrite)
            .unwrap();
        assert_eq!(got, ["a"]);
        assert_eq!(r.get("a").unwrap().payload, 4);
        assert!("bogus".parse::<ConflictMode>().is_err());
        assert_eq!(
            "error".parse::<ConflictMode>().unwrap(),
            ConflictMode::Raise
        );
    }

    #[test]
    fn renderings_follow_selection() {
        let mut r = Registry::new();
        for (i, n) in ["a", "b", "c"].iter().enumerate() {
            r.register(entry(n, i as u32), false).unwrap();
        }
        assert_eq!(
            r.catalog::<&str>(None),
            "- a: a tool\n- b: b tool\n- c: c tool"
        );
        let subset = ["c", "zzz", "a", "c"];
        let names: Vec<String> = r
            .openai_schema(Some(&subset))
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, ["c", "a"]);
        assert_eq!(r.openai_schema(Some(&[] as &[&str])), Vec::<Value>::new());
        assert_eq!(
            r.tools_description(Some(&["b"])),
            "- b: b tool\n    - x (integer, required): An x"
        );
        assert_eq!(r.tools_description(Some(&["nope"])), EMPTY_CATALOG);
        let t = &r.openai_schema::<&str>(None)[0];
        assert_eq!(
            t,
            &json!({"type": "function", "function": {"name": "a", "description": "a tool", "parameters": {"type": "object", "properties": {"x": {"type": "integer", "description": "An x"}}, "required": ["x"]}}})
        );
    }

    #[test]
    fn arguments_are_checked_against_the_rendered_schema() {
        let e = entry("a", 0);
        assert!(e.check_args(&mut json!({"x": 1})).is_ok());
        let err = e.check_args(&mut json!({"x": "1"})).unwrap_err();
        assert_eq!(err, "Error: tool 'a' failed parameter validation: parameter 'x': \"1\" is not of type \"integer\"");
        let err = e.check_args(&mut json!({})).unwrap_err();
        assert!(
            err.ends_with("parameter 'x': is required but missing"),
            "{err}"
        );
    }

    #[test]
    fn dangling_refs_and_bad_patterns_fail_at_registration() {
        let mut dangling = spec("dangling");
        dangling.input_schema =
            Some(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}));
        let err = Registry::prepare(dangling, 0).unwrap_err();
        assert!(
            matches!(err, RegistrationError::InvalidSchema { .. }),
            "{err}"
        );
        let mut bad_regex = spec("bad_regex");
        bad_regex.input_schema = Some(
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}}),
        );
        assert!(Registry::prepare(bad_regex, 0).is_err());
        let mut fine = spec("fine");
        fine.input_schema = Some(
            json!({"type": "object", "$defs": {"P": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/P"}}}),
        );
        let entry = Registry::prepare(fine, 0).unwrap();
        assert!(entry.check_args(&mut json!({"a": 1})).is_ok());
        assert!(entry.check_args(&mut json!({"a": "x"})).is_err());
    }

    #[test]
    fn unknown_tool_message_is_bounded() {
        let mut r = Registry::new();
        r.register(entry("alpha", 0), false).unwrap();
        let all = |_: &Entry<u32>| true;
        assert_eq!(
            r.unknown_tool_message("beta", &all),
            "Error: tool 'beta' does not exist. Available tools: alpha."
        );
        for i in 0..500 {
            r.register(entry(&format!("tool_{i}"), i), false).unwrap();
        }
        let msg = r.unknown_tool_message("tool_12x", &all);
        assert!(
            msg.contains("Closest names: tool_12,") && msg.contains("501 tools"),
            "{msg}"
        );
        assert!(msg.len() < 300, "{msg}");
        let none = |_: &Entry<u32>| false;
        assert!(r
            .unknown_tool_message("x", &none)
            .contains("No tools are available"));
    }
}
