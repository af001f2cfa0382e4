//! The agent's text for a call to a tool it does not have: the core's one unknown-tool message.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The error text for a model's call to `name`, given the tool names the agent may reveal
/// (registered and not denied); the same text the registry answers with, except that the list
/// of names does not end with a full stop.
/// The name comes from the model: one that is not UTF-8 (a lone surrogate, which a JSON `\ud800`
/// escape produces) is shown with U+FFFD in its place, as the registry shows it.
#[pyfunction]
pub fn _unknown_tool_text(name: &Bound<'_, PyString>, visible: Vec<String>) -> String {
    let names: Vec<&str> = visible.iter().map(String::as_str).collect();
    crate::registry::unknown_tool_message(&name.to_string_lossy(), &names, false)
}
