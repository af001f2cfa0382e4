//! A tool's checked description: what registration verifies once per tool and every registry
//! holding the tool shares, with its schema, compiled validator and text rendering derived on
//! first use and then kept.
//!
//! Checking does only what must happen at registration: the name rule, the parameter list's
//! checks and, for a hand-written schema, the meta-schema check (so a bad tool is refused at
//! `register`); a checked schema is then kept as compact text. Building the root schema (from
//! that text or from plain parameters), compiling the validator and rendering are deferred to
//! first use: with thousands of registered tools (a Tool-RAG catalog)
//! most are never called, and each derived form costs a few hundred bytes to kilobytes.
//!
//! A `CheckedTool` is immutable once built (its lazy forms are derived from what it holds), so
//! it is shared by `Arc`: a tool registered into ten registries is checked once and each
//! registry keeps a reference (the binding keeps it on the tool object; see
//! `src/py/registry/entry.rs`).

use crate::error::RegistrationError;
use crate::executor::repair::Repairing;
use crate::schema::{
    check_parameters, describe_tool, root_schema, write_root_schema, JsonSink, ToolParameter,
};
use crate::tool::{NameRule, ToolSpec};
use crate::validation::{check_root, SchemaValidator};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// Only what is needed is kept, in compact form: a catalog of thousands of tools holds
/// thousands.
#[derive(Debug)]
pub struct CheckedTool {
    /// Shared with each registry's key: one allocation for all.
    name: Arc<str>,
    description: Box<str>,
    /// The parameter list the schema is built from (empty when a root schema was given).
    parameters: Box<[ToolParameter]>,
    /// The root schema: what the model sees and what the validator is compiled from. Built on
    /// first use: from `given` when a schema was given (or had to be checked whole), from
    /// `parameters` otherwise.
    schema: OnceLock<Box<Value>>,
    /// A given (or whole-checked) schema as compact JSON text until first use: a schema kept as
    /// a `Value` costs several times its text (a map per object, a box per string), and most
    /// tools of a large catalog are never called.
    given: Option<Box<str>>,
    /// Compiled on first use, then kept: compiling costs ~15 µs a schema. The check has
    /// already run the schema against its meta-schema.
    validator: OnceLock<Box<Result<SchemaValidator, String>>>,
    /// The `get_tools_description` block, rendered on first use.
    // A thin pointer on purpose: a `String` or `Box<str>` here (24 or 16 bytes) pushes every
    // entry into the next allocation size class; the extra box is paid only when rendered.
    #[allow(clippy::box_collection)]
    description_block: OnceLock<Box<String>>,
}

impl CheckedTool {
    /// Checks a spec: its name by `rule`, its parameters, and a root schema (given, or built
    /// from parameters that carry schemas of their own) against the meta-schema.
    pub fn check(rule: NameRule, mut spec: ToolSpec) -> Result<Self, RegistrationError> {
        rule.check(&spec.name)?;
        let invalid = |name: &str, reason| RegistrationError::InvalidSchema {
            name: name.to_string(),
            reason,
        };
        let schema = OnceLock::new();
        let validator = OnceLock::new();
        let mut given = None;
        let checked = match spec.input_schema.take() {
            // A given root schema is moved, not copied: this is the one place it lives.
            Some(given) => Some(given),
            None => {
                check_parameters(&spec.parameters).map_err(|reason| {
                    RegistrationError::InvalidParameters {
                        name: spec.name.clone(),
                        reason,
                    }
                })?;
                // Plain parameters (JSON Schema type words, no schema of their own) make a
                // well-formed schema by construction: it is built when first needed. Anything
                // else is built now, to be checked whole.
                let plain = spec
                    .parameters
                    .iter()
                    .all(|p| p.schema.is_none() && is_type_word(&p.type_));
                (!plain).then(|| root_schema(&spec.parameters))
            }
        };
        if let Some(checked) = checked {
            check_root(&checked).map_err(|reason| invalid(&spec.name, reason))?;
            if needs_eager_compile(&checked) {
                // References and regexes can only be checked by compiling; a schema that has
                // them is compiled now, so a dangling `$ref` or a bad pattern fails here.
                let compiled = SchemaValidator::compile(&checked)
                    .map_err(|reason| invalid(&spec.name, reason))?;
                let _ = validator.set(Box::new(Ok(compiled)));
            }
            match compact(&checked) {
                Some(text) => given = Some(text),
                None => {
                    let _ = schema.set(Box::new(checked));
                }
            }
        }
        Ok(CheckedTool {
            name: spec.name.into(),
            description: spec.description.into(),
            parameters: spec.parameters.into(),
            schema,
            given,
            validator,
            description_block: OnceLock::new(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name as the registry keys it (shared, not copied).
    pub fn name_arc(&self) -> &Arc<str> {
        &self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    /// Whether this was checked for `name` and `description` (a tool renamed or redescribed
    /// since is checked again).
    pub fn describes(&self, name: &str, description: &str) -> bool {
        &*self.name == name && &*self.description == description
    }

    /// The root schema (built now if this is the first use).
    pub fn schema(&self) -> &Value {
        self.schema.get_or_init(|| Box::new(self.build_schema()))
    }

    /// The root schema built anew: read from the given text, or from the parameters.
    fn build_schema(&self) -> Value {
        match &self.given {
            // Written by `compact` from a checked value of bounded depth: it reads back.
            Some(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            None => root_schema(&self.parameters),
        }
    }

    /// The root schema as an owned value to hand on (a rendering): a copy of the kept one, or
    /// one built for the occasion, which leaves nothing behind.
    pub fn schema_value(&self) -> Value {
        match self.schema.get() {
            Some(schema) => Value::clone(schema),
            None => self.build_schema(),
        }
    }

    /// Writes the root schema into `sink`: the kept one, or straight from the parameters or the
    /// given text (nothing is kept).
    pub fn write_schema<S: JsonSink>(&self, sink: &mut S) -> Result<S::Out, S::Error> {
        match (self.schema.get(), &self.given) {
            (Some(schema), _) => sink.value(schema),
            (None, Some(_)) => sink.value(&self.build_schema()),
            (None, None) => write_root_schema(&self.parameters, sink),
        }
    }

    /// Runs `f` on the root schema: the kept one, or one built for the occasion and dropped.
    pub fn with_schema<R>(&self, f: impl FnOnce(&Value) -> R) -> R {
        match self.schema.get() {
            Some(schema) => f(schema),
            None => f(&self.build_schema()),
        }
    }

    /// Whether the root schema has been built (a test of the laziness).
    pub fn schema_is_built(&self) -> bool {
        self.schema.get().is_some()
    }

    /// Whether the validator has been compiled.
    pub fn validator_is_compiled(&self) -> bool {
        self.validator.get().is_some()
    }

    /// The `get_tools_description` block for this tool.
    pub fn description_block(&self) -> &str {
        // From a schema built for the occasion unless one is kept: describing a catalog must
        // not leave each tool's schema behind.
        self.description_block.get_or_init(|| {
            Box::new(
                self.with_schema(|schema| describe_tool(&self.name, &self.description, schema)),
            )
        })
    }

    /// The compiled validator (compiled now if this is the first use).
    pub fn validator(&self) -> Result<&SchemaValidator, String> {
        self.validator
            .get_or_init(|| Box::new(SchemaValidator::compile(self.schema())))
            .as_ref()
            .as_ref()
            .map_err(|reason| {
                format!(
                    "Error: tool '{}' has an input schema that cannot be compiled: {reason}",
                    self.name
                )
            })
    }

    /// Validates `args`; on failure, the error text for the model. A `null` sent for an
    /// optional property whose schema refuses null (what OpenAI's strict rendering lets the
    /// model send for "use the default") is removed from `args` first; `Ok(true)` says that
    /// happened, so the caller hands the tool the pruned arguments. Arguments that validate as
    /// they are cost nothing more.
    pub fn check_args(&self, args: &mut Value) -> Result<bool, String> {
        super::check_args_with(&self.name, self.schema(), self.validator()?, args)
    }

    /// [`Self::check_args`], with schema-aligned repair (see [`super::repair_args`]): `how` is
    /// asked only when something could change, and each repair is added to `repairs`.
    pub fn check_args_with(
        &self,
        args: &mut Value,
        how: impl FnOnce() -> Repairing,
        repairs: &mut Vec<String>,
    ) -> Result<bool, String> {
        super::repair_args(
            &self.name,
            self.schema(),
            self.validator()?,
            args,
            how,
            repairs,
        )
    }
}

/// `schema` as compact JSON text, or None when it nests too deeply for `serde_json` to read back
/// (its reader stops at 128 levels), in which case the value is kept as it is.
fn compact(schema: &Value) -> Option<Box<str>> {
    fn depth(v: &Value) -> usize {
        match v {
            Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }
    if depth(schema) > 100 {
        return None;
    }
    serde_json::to_string(schema)
        .ok()
        .map(String::into_boxed_str)
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
