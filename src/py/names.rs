//! The tool-name rule for Python code that checks a name before a registry sees it (`@tool`).

use crate::tool::check_tool_name;
use pyo3::prelude::*;

/// Why ``name`` cannot be a tool name (the registry's full message), or None when it can.
#[pyfunction(name = "_tool_name_problem")]
pub fn tool_name_problem(name: &str) -> Option<String> {
    check_tool_name(name).err().map(|e| e.to_string())
}
