//! The model-facing texts the Python side of the package writes, read from the core
//! ([`crate::executor::messages`]) so every text the model reads has one home.

use crate::executor::messages;
use pyo3::prelude::*;

/// The text for an `async def` tool called synchronously where an event loop runs.
#[pyfunction]
pub fn _async_in_running_loop_text(name: &str) -> String {
    messages::async_in_running_loop(name)
}

/// The text a served call gets when the host failed to run it (`problem`: `Type: message`).
#[pyfunction]
pub fn _serve_failed_text(name: &str, problem: &str) -> String {
    messages::serve_failed(name, problem)
}
