//! The provider renderers of [`crate::render`] for one schema (`agentmaker.tools.render` uses them;
//! the registry renders its tools through `ToolRegistry.to_*_schema`).

use crate::py::convert::{py_to_value, value_to_py};
use crate::render::{gemini_schema, strict_schema, NotStrict};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use serde_json::Value;

fn schema_value(schema: &Bound<'_, PyAny>) -> PyResult<Value> {
    py_to_value(schema)
        .map_err(|e| PyTypeError::new_err(format!("the schema is not JSON: {}", e.describe())))
}

/// ``(form, None)`` with the OpenAI strict form of a root schema, or ``(None, reason)``.
#[pyfunction(name = "_render_strict_schema")]
pub fn render_strict_schema<'py>(
    schema: &Bound<'py, PyAny>,
) -> PyResult<(Option<Bound<'py, PyAny>>, Option<String>)> {
    let py = schema.py();
    match strict_schema(&schema_value(schema)?) {
        Ok(form) => Ok((Some(value_to_py(py, &form)?), None)),
        Err(NotStrict(reason)) => Ok((None, Some(reason))),
    }
}

/// The Gemini form of a schema.
#[pyfunction(name = "_render_gemini_schema")]
pub fn render_gemini_schema<'py>(schema: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    value_to_py(schema.py(), &gemini_schema(&schema_value(schema)?))
}
