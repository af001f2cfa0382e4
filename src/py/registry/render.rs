//! The registry's renderings as Python objects. Each provider form of a tool (rendered by
//! [`crate::render`]) is converted on first use and kept with the tool's entry, so it lives
//! exactly as long as that registration: re-registering a tool renders it afresh, and the other
//! tools keep theirs. The forms are shared between calls: treat them as read-only.

use super::entry::PyEntry;
use crate::py::convert::value_to_py;
use crate::render::{anthropic_tool, gemini_declaration, openai_tool, strict_tool};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString};
use std::sync::{Arc, OnceLock};

/// A provider format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    OpenAi,
    /// OpenAI with `"strict": true` where the schema allows it.
    Strict,
    Anthropic,
    Gemini,
}

/// A tool's converted forms. Nothing is allocated until a first rendering: most tools of a large
/// catalog are never rendered whole.
#[derive(Default)]
pub struct Forms(OnceLock<Box<Converted>>);

struct Converted {
    openai: PyOnceLock<Py<PyAny>>,
    /// The strict entry and, when the schema has no strict form, why.
    strict: PyOnceLock<(Py<PyAny>, Option<String>)>,
    anthropic: PyOnceLock<Py<PyAny>>,
    gemini: PyOnceLock<Py<PyAny>>,
}

impl Default for Converted {
    fn default() -> Self {
        Converted {
            openai: PyOnceLock::new(),
            strict: PyOnceLock::new(),
            anthropic: PyOnceLock::new(),
            gemini: PyOnceLock::new(),
        }
    }
}

fn converted(entry: &PyEntry) -> &Converted {
    entry.payload.forms.0.get_or_init(Box::default)
}

fn strict<'a>(py: Python<'_>, entry: &'a PyEntry) -> PyResult<&'a (Py<PyAny>, Option<String>)> {
    converted(entry).strict.get_or_try_init(py, || {
        let (form, reason) =
            entry.with_schema(|schema| strict_tool(entry.name(), entry.description(), schema));
        Ok((value_to_py(py, &form)?.unbind(), reason))
    })
}

/// One tool's form, converted now if this is the first use.
pub fn form<'py>(py: Python<'py>, entry: &PyEntry, kind: Kind) -> PyResult<Bound<'py, PyAny>> {
    let (name, description) = (entry.name(), entry.description());
    let forms = converted(entry);
    let cell = match kind {
        Kind::Strict => return Ok(strict(py, entry)?.0.bind(py).clone()),
        Kind::OpenAi => &forms.openai,
        Kind::Anthropic => &forms.anthropic,
        Kind::Gemini => &forms.gemini,
    };
    let form = cell.get_or_try_init(py, || {
        // A schema not yet built for validation is built for this rendering and dropped.
        let value = match kind {
            Kind::OpenAi => openai_tool(name, description, entry.schema_value()),
            Kind::Anthropic => anthropic_tool(name, description, entry.schema_value()),
            _ => entry.with_schema(|schema| gemini_declaration(name, description, schema)),
        };
        value_to_py(py, &value).map(Bound::unbind)
    })?;
    Ok(form.bind(py).clone())
}

/// The forms of `entries`, in their order.
pub fn forms<'py>(
    py: Python<'py>,
    entries: &[Arc<PyEntry>],
    kind: Kind,
) -> PyResult<Bound<'py, PyList>> {
    let items = entries
        .iter()
        .map(|entry| form(py, entry, kind))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// `{name: reason}` for the `entries` whose strict form falls back to the plain one.
pub fn strict_fallbacks<'py>(
    py: Python<'py>,
    entries: &[Arc<PyEntry>],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for entry in entries {
        if let (_, Some(reason)) = strict(py, entry)? {
            out.set_item(entry.name(), reason)?;
        }
    }
    Ok(out)
}

/// The registry-wide texts for one registry version, each built on first use.
pub struct Rendered {
    pub version: u64,
    pub description: PyOnceLock<Py<PyString>>,
    pub catalog: PyOnceLock<Py<PyString>>,
}

impl Rendered {
    pub fn new(version: u64) -> Self {
        Rendered {
            version,
            description: PyOnceLock::new(),
            catalog: PyOnceLock::new(),
        }
    }
}
