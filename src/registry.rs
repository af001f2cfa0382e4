//! The tool registry: tools keyed by name in registration order, each with its schema, compiled
//! validator and text rendering derived on first use and then kept.
//!
//! The registry is generic over the payload that says how to run a tool, so the core can hold
//! Rust tools and the binding can hold Python objects with the same rules.
//!
//! What depends only on the tool (its checks, schema, validator, renderings) is a
//! [`CheckedTool`] (`registry/checked.rs`), made once and shared by `Arc`; an entry pairs it
//! with this registry's payload, so registering a tool checked before costs the name rule and
//! a map insert.

use crate::error::RegistrationError;
use crate::executor::messages;
use crate::executor::repair::{coerce, RepairMode, Repairing};
use crate::null_optional::drop_null_optionals;
use crate::render::openai_tool;
use crate::tool::{NameRule, ToolSpec};
use crate::validation::{render_failure, truncate, SchemaValidator};
use indexmap::IndexMap;
use serde_json::Value;
use std::str::FromStr;
use std::sync::Arc;

/// Text used when a rendering selects no tools.
pub const EMPTY_CATALOG: &str = "(no tools available)";
/// Up to this many registered names are listed when the model asks for an unknown tool;
/// past it only the closest names are suggested.
const LIST_ALL_NAMES_UP_TO: usize = 20;
const SUGGESTIONS: usize = 5;

/// A registered tool: its checked description, shared by every registry it is in, and the
/// payload that says how this registry runs it. (The spec's flags are not kept: the executor
/// reads them from the tool object at each call.)
#[derive(Debug)]
pub struct Entry<T> {
    checked: Arc<CheckedTool>,
    pub payload: T,
}

impl<T> Entry<T> {
    /// An entry for a tool checked before (for this registry or another): only the name is
    /// checked again, against `rule`, the rule of the registry it is meant for.
    pub fn from_checked(
        rule: NameRule,
        checked: Arc<CheckedTool>,
        payload: T,
    ) -> Result<Self, RegistrationError> {
        rule.check(checked.name())?;
        Ok(Entry { checked, payload })
    }

    /// The checked description, to keep and share with the next registry.
    pub fn checked(&self) -> &Arc<CheckedTool> {
        &self.checked
    }
}

impl<T> std::ops::Deref for Entry<T> {
    type Target = CheckedTool;

    fn deref(&self) -> &CheckedTool {
        &self.checked
    }
}

/// [`Entry::check_args`] for any tool holding its own schema and validator (a tool called
/// directly, outside a registry): the same pruning of nulls and the same texts, no repair.
pub fn check_args_with(
    name: &str,
    schema: &Value,
    validator: &SchemaValidator,
    args: &mut Value,
) -> Result<bool, String> {
    let off = || Repairing {
        mode: RepairMode::Off,
        function_tool: false,
    };
    repair_args(name, schema, validator, args, off, &mut Vec::new())
}

/// Validates `args` against `schema` with schema-aligned repair: arguments that fail validation
/// are coerced to the schema (see [`crate::executor::repair::coerce`]) unless the mode (`how`
/// is asked only when something could change) is [`RepairMode::Off`], and kept when they then
/// validate; each repair is added to `repairs`. Valid arguments are left as they are, except
/// for a function tool (`function_tool`), which never receives unknown keys or floats for ints:
/// there a top-level key the schema does not name is renamed to the one missing property it
/// matches, and integral floats for integer parameters become ints. A `null` sent for an
/// optional property whose schema refuses null is removed. `Ok(true)` says `args` changed. On
/// failure the text is the validator's report on the arguments as sent, followed by what was
/// not repaired because more than one reading fits.
pub fn repair_args(
    name: &str,
    schema: &Value,
    validator: &SchemaValidator,
    args: &mut Value,
    how: impl FnOnce() -> Repairing,
    repairs: &mut Vec<String>,
) -> Result<bool, String> {
    if validator.is_valid(args) {
        let floats = coerce::has_float(args);
        if !floats && !validator.has_unknown_key(args) {
            return Ok(false);
        }
        let how = how();
        if how.mode == RepairMode::Off || !how.function_tool {
            return Ok(false);
        }
        let mut candidate = args.clone();
        let mut found = Vec::new();
        let renamed = coerce::rename_unknown_keys(schema, &mut candidate, &mut found);
        let ints = floats && coerce::integral_floats(schema, &mut candidate, &mut found);
        if (renamed || ints) && validator.is_valid(&candidate) {
            *args = candidate;
            repairs.append(&mut found);
            return Ok(true);
        }
        return Ok(false);
    }
    let mut ambiguities = Vec::new();
    if how().mode != RepairMode::Off {
        let mut candidate = args.clone();
        let mut found = coerce::Coercion::default();
        coerce::coerce(schema, &mut candidate, &mut found);
        let changed = !found.repairs.is_empty() || found.pruned;
        if changed && validator.is_valid(&candidate) {
            *args = candidate;
            repairs.append(&mut found.repairs);
            return Ok(true);
        }
        ambiguities = found.ambiguities;
    }
    let pruned = drop_null_optionals(schema, args);
    if pruned && validator.is_valid(args) {
        return Ok(true);
    }
    let issues = validator.issues(args);
    Err(messages::with_ambiguities(
        render_failure(name, &issues),
        &ambiguities,
    ))
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
    entries: IndexMap<Arc<str>, Arc<Entry<T>>>,
    /// Bumped on every change, so renderings cached by callers know when to rebuild.
    version: u64,
    /// The names `register` accepts (`prepare` checks only the loosest rule, the catalog's).
    name_rule: NameRule,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry::with_name_rule(NameRule::default())
    }
}

impl<T> Registry<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_name_rule(name_rule: NameRule) -> Self {
        Registry {
            entries: IndexMap::new(),
            version: 0,
            name_rule,
        }
    }

    pub fn name_rule(&self) -> NameRule {
        self.name_rule
    }

    /// Checks a spec and builds its entry without touching the registry (names by the
    /// catalog rule, the loosest; `register` applies the registry's own).
    pub fn prepare(spec: ToolSpec, payload: T) -> Result<Entry<T>, RegistrationError> {
        Self::prepare_with(NameRule::Catalog, spec, payload)
    }

    /// [`Registry::prepare`] with the name rule of the registry the entry is meant for, so a
    /// bad name is reported in that rule's words.
    pub fn prepare_with(
        rule: NameRule,
        spec: ToolSpec,
        payload: T,
    ) -> Result<Entry<T>, RegistrationError> {
        Ok(Entry {
            checked: Arc::new(CheckedTool::check(rule, spec)?),
            payload,
        })
    }

    /// Adds `entry`; with `overwrite`, a tool of the same name is replaced (keeping its
    /// position) and returned, so the caller decides where it is dropped.
    pub fn register(
        &mut self,
        entry: Entry<T>,
        overwrite: bool,
    ) -> Result<Option<Arc<Entry<T>>>, RegistrationError> {
        self.name_rule.check(entry.name())?;
        // One hash of the name; a replaced tool keeps its position.
        let replaced = match self.entries.entry(Arc::clone(entry.name_arc())) {
            indexmap::map::Entry::Occupied(_) if !overwrite => {
                return Err(RegistrationError::Duplicate {
                    name: entry.name().to_string(),
                })
            }
            indexmap::map::Entry::Occupied(mut slot) => Some(slot.insert(Arc::new(entry))),
            indexmap::map::Entry::Vacant(slot) => {
                slot.insert(Arc::new(entry));
                None
            }
        };
        self.version += 1;
        Ok(replaced)
    }

    /// Registers a batch atomically: if any entry is refused, the registry is left exactly as it
    /// was. Returns the names actually registered, in order.
    pub fn register_all(
        &mut self,
        entries: Vec<Entry<T>>,
        mode: ConflictMode,
    ) -> Result<Vec<String>, RegistrationError> {
        for entry in &entries {
            self.name_rule.check(entry.name())?;
        }
        let mut taken: std::collections::HashSet<&str> =
            self.entries.keys().map(|k| &**k).collect();
        let mut keep = Vec::with_capacity(entries.len());
        for entry in &entries {
            let name = entry.name();
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
                registered.push(entry.name().to_string());
                self.entries
                    .insert(Arc::clone(entry.name_arc()), Arc::new(entry));
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
        self.entries.keys().map(|k| &**k)
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
            .map(|e| format!("- {}: {}", e.name(), e.description()))
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
        self.select(names)
            .into_iter()
            .map(|e| openai_tool(e.name(), e.description(), e.schema_value()))
            .collect()
    }

    /// The error text for a call to a tool that is not registered (see
    /// [`unknown_tool_message`]). `visible` hides tools the caller may not reveal (for example
    /// those denied by permissions).
    pub fn unknown_tool_message(&self, name: &str, visible: &dyn Fn(&Entry<T>) -> bool) -> String {
        let candidates: Vec<&str> = self
            .entries
            .values()
            .filter(|e| visible(e))
            .map(|e| e.name())
            .collect();
        unknown_tool_message(name, &candidates, true)
    }
}

/// The error text for a call to `name`, which is none of `candidates` (the tool names the caller
/// may reveal). It lists every name only when there are few; otherwise it suggests the closest
/// names, so thousands of tools do not flood the model. The one text for the registry and the
/// agent; `list_ends_with_stop` is the one difference between them: the registry's list of names
/// ends with a full stop, the agent's never did and its callers match it exactly.
pub fn unknown_tool_message(name: &str, candidates: &[&str], list_ends_with_stop: bool) -> String {
    let shown = truncate(name, 64);
    if candidates.is_empty() {
        return format!("Error: tool '{shown}' does not exist. No tools are available.");
    }
    if candidates.len() <= LIST_ALL_NAMES_UP_TO {
        let stop = if list_ends_with_stop { "." } else { "" };
        return format!(
            "Error: tool '{shown}' does not exist. Available tools: {}{stop}",
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

mod checked;
pub use checked::CheckedTool;

#[cfg(test)]
mod tests;
