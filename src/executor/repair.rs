//! Repairing what the model almost got right, never guessing.
//!
//! Two stages, each used only when the strict path fails:
//! - [`envelope`] and [`lenient`]: arguments text that `serde_json` refuses, read leniently
//!   (code fences and prose around one object, trailing commas, single quotes, unquoted keys,
//!   Python and JavaScript literals, comments, line breaks in strings, an object encoded twice,
//!   and closing brackets missing at the very end, but only when the model ended its reply
//!   itself: a reply cut off by its token limit is never completed);
//! - [`coerce`]: arguments that fail validation, brought in line with the tool's schema where
//!   exactly one reading fits.
//!
//! Every repair is reported (the call's record, and a note at the end of the text the model
//! reads). Arguments that are valid as sent are never changed, with two exceptions for a tool
//! made from a function (called with keyword arguments, which never receives a key it does not
//! declare): an integral float for an integer parameter (`3.0`, which JSON Schema counts as an
//! integer) becomes an int, so the function receives the type it declared; and a top-level key
//! the schema does not name is renamed to the one missing parameter it matches (`initialSpeed`
//! for `initial_speed`), where it would otherwise be dropped and the default used. A
//! `null` for an optional parameter means "use the default" (OpenAI's strict mode sends it by
//! design): it is left out silently, in every mode, as before.

pub mod coerce;
pub mod envelope;
pub mod keywords;
pub mod lenient;

use std::str::FromStr;

/// How much may be repaired: `RunPolicy(repair=...)` and `@tool(repair=...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepairMode {
    /// Lenient parsing of the arguments text, then schema-aligned coercion.
    #[default]
    Full,
    /// Strict parsing; schema-aligned coercion only.
    Coerce,
    /// Neither: arguments are taken as sent (a `null` meaning "use the default" is still
    /// left out, as the strict OpenAI rendering requires).
    Off,
}

impl RepairMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RepairMode::Full => "full",
            RepairMode::Coerce => "coerce",
            RepairMode::Off => "off",
        }
    }
}

/// What may change in one call's arguments: the tool's setting (or the run's), and whether the
/// tool is a function that must receive an int for an integer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repairing {
    pub mode: RepairMode,
    /// The tool is a function: integral floats become ints for integer parameters, and
    /// unknown top-level keys are renamed to the missing parameter they match, even in valid
    /// arguments.
    pub function_tool: bool,
}

impl FromStr for RepairMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(RepairMode::Full),
            "coerce" => Ok(RepairMode::Coerce),
            "off" => Ok(RepairMode::Off),
            other => Err(format!(
                "repair must be \"full\", \"coerce\" or \"off\", got {other:?}"
            )),
        }
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
