//! Error types of the core. Each enum is one domain; the binding maps every variant to its own
//! Python exception class.

use thiserror::Error;

/// A programming mistake made while building or registering tools. These are raised to the
/// developer at definition time (never shown to the model), so every message says what to change.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegistrationError {
    #[error(
        "tool name {name:?} is not accepted: {reason}; a tool name is 1 to 128 characters with no whitespace or control characters (dots, '::' and '/' are fine), so rename the tool"
    )]
    IllegalName { name: String, reason: String },

    #[error(
        "tool name {name:?} is not accepted: it must match ^[a-zA-Z0-9_-]{{1,64}}$ (the function-calling function-name rule), but {reason}; rename the tool{hint}"
    )]
    StrictName {
        name: String,
        reason: String,
        hint: &'static str,
    },

    #[error("names must be \"strict\" (the default) or \"catalog\", got {got:?}")]
    NameRule { got: String },

    #[error(
        "tool name '{name}' is already registered; pass overwrite=True (or register_all(..., on_conflict=\"skip\"/\"overwrite\")) if replacing it is intended, or choose another name"
    )]
    Duplicate { name: String },

    #[error("tool '{name}' has an unusable input schema: {reason}")]
    InvalidSchema { name: String, reason: String },

    #[error("tool '{name}' has a bad parameter list: {reason}")]
    InvalidParameters { name: String, reason: String },

    #[error("on_conflict must be \"raise\", \"skip\" or \"overwrite\", got {got:?}")]
    ConflictMode { got: String },
}

/// A problem with user-supplied configuration of a built-in (bad prompts, bad limits, ...).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("unknown prompt key {key:?}; known keys: {known}")]
    UnknownPromptKey { key: String, known: String },

    #[error("{0}")]
    Invalid(String),
}
