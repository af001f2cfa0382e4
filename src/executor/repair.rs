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
//! reads); arguments that are valid as sent are never changed, except an integral float for an
//! integer parameter, which becomes an int so the tool receives the type it declared.

pub mod coerce;
pub mod envelope;
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
