//! Whether a registered tool runs in a worker process (`agentmaker.isolation`), and handing a
//! call to the worker pool.

use super::entry::{PyEntry, Runner};
use crate::py::errors::tool_registration_error;
use crate::py::response::PyToolResponse;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBool;

/// A tool's `isolate` setting, read at registration.
pub enum Isolate {
    /// None: the run's policy decides.
    Unset,
    /// False, or a Rust built-in (nothing to isolate).
    Never,
    /// True or an `Isolation`.
    With(Py<PyAny>),
}

/// Reads `tool.isolate`: None, a bool, or an `Isolation` (checked by its type name, so the
/// registry need not import the module until a tool uses it).
pub fn read_isolate(obj: &Bound<'_, PyAny>, name: &str, runner: &Runner) -> PyResult<Isolate> {
    let py = obj.py();
    if matches!(runner, Runner::Native(_)) {
        return Ok(Isolate::Never);
    }
    let value = obj.getattr(intern!(py, "isolate"))?;
    if value.is_none() {
        return Ok(Isolate::Unset);
    }
    let ok = match value.cast::<PyBool>() {
        Ok(b) => {
            if !b.is_true() {
                return Ok(Isolate::Never);
            }
            true
        }
        Err(_) => value.get_type().name()?.to_str()? == "Isolation",
    };
    if !ok {
        return Err(tool_registration_error(
            py,
            format!(
                "tool '{name}': isolate must be True, False, None or an Isolation, got {}",
                value.repr()?
            ),
        ));
    }
    if matches!(runner, Runner::AsyncOnly) {
        return Err(tool_registration_error(
            py,
            format!("tool '{name}' is isolated but only implements arun(); a worker process runs a tool's run()"),
        ));
    }
    Ok(Isolate::With(value.unbind()))
}

impl PyEntry {
    /// How this tool runs for a caller whose default is `default` (a run's
    /// `RunPolicy(isolate=...)`): in a worker with these settings, or in place (None). Inside a
    /// worker every tool runs in place.
    pub fn isolation(&self, py: Python<'_>, default: Option<&Py<PyAny>>) -> Option<Py<PyAny>> {
        if crate::py::isolation::in_worker() {
            return None;
        }
        match &self.payload.isolate {
            Isolate::With(iso) => Some(iso.clone_ref(py)),
            Isolate::Never => None,
            Isolate::Unset => match self.payload.runner {
                Runner::Run | Runner::Kwargs(_) => default.map(|d| d.clone_ref(py)),
                _ => None,
            },
        }
    }
}

fn isolation_module(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CELL.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("agentmaker.isolation.workers")?
                .into_any()
                .unbind(),
        )
    })
    .map(|m| m.bind(py))
}

/// Runs the call in a worker and waits (at most `timeout` seconds).
pub fn call_sync(
    py: Python<'_>,
    entry: &PyEntry,
    params: &Bound<'_, PyAny>,
    isolation: &Py<PyAny>,
    timeout: Option<f64>,
) -> PyResult<Py<PyToolResponse>> {
    let resp = isolation_module(py)?.call_method1(
        intern!(py, "call_sync"),
        (
            entry.payload.obj.bind(py),
            params,
            isolation.bind(py),
            timeout,
        ),
    )?;
    Ok(resp.cast_into::<PyToolResponse>()?.unbind())
}

/// The coroutine that runs the call in a worker, waiting on the event loop.
pub fn call_async<'py>(
    py: Python<'py>,
    entry: &PyEntry,
    params: &Bound<'py, PyAny>,
    isolation: &Py<PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    isolation_module(py)?.call_method1(
        intern!(py, "call_async"),
        (entry.payload.obj.bind(py), params, isolation.bind(py)),
    )
}
