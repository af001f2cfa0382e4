//! The model-facing texts the Python side of the package writes, read from the core
//! ([`crate::executor::messages`]) so every text the model reads has one home.

use crate::executor::messages;
use pyo3::prelude::*;

/// The text for an `async def` tool called synchronously where an event loop runs.
#[pyfunction]
pub fn _async_in_running_loop_text(name: &str) -> String {
    messages::async_in_running_loop(name)
}

/// The validation error text around `detail`, for the checks a Python converter makes after
/// the schema's (a pydantic field, a positional-only parameter).
#[pyfunction]
pub fn _validation_failed_text(name: &str, detail: &str) -> String {
    crate::validation::validation_failed(name, detail)
}

/// The text for a tool function's return value that has no JSON form.
#[pyfunction]
pub fn _result_not_json_text(name: &str, what: &str) -> String {
    messages::result_not_json(name, what)
}

/// The text a served call gets when the host failed to run it (`problem`: `Type: message`).
#[pyfunction]
pub fn _serve_failed_text(name: &str, problem: &str) -> String {
    messages::serve_failed(name, problem)
}
