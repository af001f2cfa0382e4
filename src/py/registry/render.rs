//! The registry's renderings as Python objects. Each provider form of a tool (rendered by
//! [`crate::render`]) is converted on first use and kept with the tool's entry, so it lives
//! exactly as long as that registration: re-registering a tool renders it afresh, and the other
//! tools keep theirs. The forms are shared between calls: treat them as read-only.

use super::entry::PyEntry;
use crate::py::convert::{value_to_py, PySink};
use crate::render::{anthropic_tool, gemini_declaration, strict_tool, write_openai_tool};
use crate::wire::WireNames;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A provider format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

fn strict_form(
    py: Python<'_>,
    entry: &PyEntry,
    name: &str,
) -> PyResult<(Py<PyAny>, Option<String>)> {
    let (form, reason) = entry.with_schema(|schema| strict_tool(name, entry.description(), schema));
    Ok((value_to_py(py, &form)?.unbind(), reason))
}

fn strict<'a>(py: Python<'_>, entry: &'a PyEntry) -> PyResult<&'a (Py<PyAny>, Option<String>)> {
    converted(entry)
        .strict
        .get_or_try_init(py, || strict_form(py, entry, entry.name()))
}

/// The form of `entry` rendered under `name` (its real name or its wire name).
fn render(py: Python<'_>, entry: &PyEntry, name: &str, kind: Kind) -> PyResult<Py<PyAny>> {
    let description = entry.description();
    // A schema not yet built for validation is built for this rendering and dropped.
    let value = match kind {
        Kind::Strict => return Ok(strict_form(py, entry, name)?.0),
        Kind::OpenAi => {
            // Written straight into Python objects: no intermediate value to build and drop.
            let mut sink = PySink(py);
            let parameters = match &entry.payload.schema {
                Some(schema) => schema.bind(py).clone(),
                None => entry.write_schema(&mut sink)?,
            };
            return Ok(
                write_openai_tool(name, description, parameters, false, &mut sink)?.unbind(),
            );
        }
        Kind::Anthropic => anthropic_tool(name, description, entry.schema_value()),
        Kind::Gemini => entry.with_schema(|schema| gemini_declaration(name, description, schema)),
    };
    value_to_py(py, &value).map(Bound::unbind)
}

/// One tool's form, converted now if this is the first use. A tool whose name is not wire-safe
/// is rendered under its wire name, which depends on the other names: that form is cached with
/// the registry version (`rendered`), not with the tool.
pub fn form<'py>(
    py: Python<'py>,
    entry: &PyEntry,
    kind: Kind,
    rendered: &dyn Fn() -> Arc<Rendered>,
) -> PyResult<Bound<'py, PyAny>> {
    if !entry.payload.wire_safe {
        let rendered = rendered();
        let key = (entry.name().to_string(), kind);
        let cached = rendered
            .forms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .map(|f| f.clone_ref(py));
        if let Some(form) = cached {
            return Ok(form.into_bound(py));
        }
        let form = render(py, entry, rendered.wire.wire(entry.name()), kind)?;
        rendered
            .forms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, form.clone_ref(py));
        return Ok(form.into_bound(py));
    }
    let forms = converted(entry);
    let cell = match kind {
        Kind::Strict => return Ok(strict(py, entry)?.0.bind(py).clone()),
        Kind::OpenAi => &forms.openai,
        Kind::Anthropic => &forms.anthropic,
        Kind::Gemini => &forms.gemini,
    };
    let form = cell.get_or_try_init(py, || render(py, entry, entry.name(), kind))?;
    Ok(form.bind(py).clone())
}

/// Python's cyclic garbage collector paused while a rendering builds its dicts: they hold no
/// cycles, and a first rendering of a thousand tools makes thousands of containers, which would
/// otherwise set off several collections (each walking every young object) on the way.
struct GcPause {
    was_enabled: bool,
}

impl GcPause {
    fn new(_py: Python<'_>) -> Self {
        // SAFETY: called with the GIL held (the `Python` token proves it).
        GcPause {
            was_enabled: unsafe { pyo3::ffi::PyGC_Disable() } != 0,
        }
    }
}

impl Drop for GcPause {
    fn drop(&mut self) {
        if self.was_enabled {
            // SAFETY: dropped on the thread that made it, which still holds the GIL.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// The forms of `entries`, in their order.
pub fn forms<'py>(
    py: Python<'py>,
    entries: &[Arc<PyEntry>],
    kind: Kind,
    rendered: &dyn Fn() -> Arc<Rendered>,
) -> PyResult<Bound<'py, PyList>> {
    let _pause = (entries.len() > 64).then(|| GcPause::new(py));
    // Looked up once for the whole list, and only if a tool needs its wire name.
    let once = std::cell::OnceCell::new();
    let rendered = || Arc::clone(once.get_or_init(rendered));
    let items = entries
        .iter()
        .map(|entry| form(py, entry, kind, &rendered))
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

/// What one registry version renders: the wire names (computed with it), the registry-wide
/// texts (each built on first use) and the forms of the tools rendered under a wire name.
pub struct Rendered {
    pub version: u64,
    pub wire: WireNames,
    pub description: PyOnceLock<Py<PyString>>,
    pub catalog: PyOnceLock<Py<PyString>>,
    /// Locked only to read or insert one form; never held while Python code runs.
    pub forms: Mutex<HashMap<(String, Kind), Py<PyAny>>>,
}

impl Rendered {
    pub fn new(version: u64, wire: WireNames) -> Self {
        Rendered {
            version,
            wire,
            description: PyOnceLock::new(),
            catalog: PyOnceLock::new(),
            forms: Mutex::new(HashMap::new()),
        }
    }
}
