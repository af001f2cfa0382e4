//! `_parse_docstring` for the Python `@tool` front (see `crate::docstring`).

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Parse a docstring into ``(description, {parameter: description})``.
#[pyfunction]
#[pyo3(name = "_parse_docstring")]
pub fn parse_docstring<'py>(py: Python<'py>, doc: &str) -> PyResult<(String, Bound<'py, PyDict>)> {
    let info = crate::docstring::parse(doc);
    let params = PyDict::new(py);
    for (name, text) in &info.params {
        params.set_item(name, text)?;
    }
    Ok((info.description, params))
}
