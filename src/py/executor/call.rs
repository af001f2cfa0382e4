//! Reading one tool call as the model sent it (an OpenAI-shaped dict, or an SDK object with
//! the same attributes), and the call once it passed the gates.

use crate::executor::arguments::check_call;
use crate::executor::{Kind, Refusal};
use crate::py::convert::py_to_value;
use crate::py::registry::PyEntry;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a call carried, read once.
pub struct ReadCall<'py> {
    /// The id the transcript uses: the model's, or a made-up one when it sent none.
    pub id: Bound<'py, PyAny>,
    /// The function name as sent (a str), or an empty str.
    pub name: Bound<'py, PyString>,
    /// The raw arguments as sent.
    pub raw: Bound<'py, PyAny>,
    /// The call as the assistant message records it: the model's own dict when it is well
    /// formed, otherwise one rebuilt so every tool message answers an id that appears in it.
    pub wire: Bound<'py, PyAny>,
    /// Gate 1's verdict on the id and the name.
    pub checked: Result<(), Refusal>,
}

fn item<'py>(
    obj: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.cast::<PyDict>() {
        Ok(d) => d.get_item(key),
        Err(_) => obj.getattr_opt(key),
    }
}

/// Reads call number `index` of turn `turn`.
pub fn read_call<'py>(
    call: &Bound<'py, PyAny>,
    index: usize,
    turn: usize,
) -> PyResult<ReadCall<'py>> {
    let py = call.py();
    let id = item(call, intern!(py, "id"))?;
    let func = item(call, intern!(py, "function"))?.filter(|f| !f.is_none());
    let (name, raw) = match &func {
        Some(f) => (
            item(f, intern!(py, "name"))?,
            item(f, intern!(py, "arguments"))?,
        ),
        None => (None, None),
    };
    let raw = raw.unwrap_or_else(|| py.None().into_bound(py));
    let name = match name.as_ref().and_then(|n| n.cast::<PyString>().ok()) {
        Some(n) => n.clone(),
        None => PyString::new(py, ""),
    };
    let id_text = id
        .as_ref()
        .and_then(|i| i.cast::<PyString>().ok())
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty());
    let name_text = name.to_string_lossy();
    let checked = check_call(id_text.as_deref(), Some(&name_text));
    let good_id = id_text.is_some();
    let id = match id.filter(|_| good_id) {
        Some(id) => id,
        None => PyString::new(py, &format!("call_missing_id_t{turn}_{index}")).into_any(),
    };
    let raw_is_text = raw.is_none() || raw.is_instance_of::<PyString>();
    let own_dict = call.is_instance_of::<PyDict>()
        && func.as_ref().is_some_and(|f| f.is_instance_of::<PyDict>());
    let wire = if good_id && own_dict && raw_is_text {
        call.clone()
    } else {
        let arguments = if raw.is_none() {
            PyString::new(py, "").into_any()
        } else if raw_is_text {
            raw.clone()
        } else {
            let text = match py_to_value(&raw) {
                Ok(v) => serde_json::to_string(&v).unwrap_or_default(),
                Err(_) => raw.repr().map(|r| r.to_string()).unwrap_or_default(),
            };
            PyString::new(py, &text).into_any()
        };
        let function = PyDict::new(py);
        function.set_item("name", &name)?;
        function.set_item("arguments", arguments)?;
        let rebuilt = PyDict::new(py);
        rebuilt.set_item("id", &id)?;
        rebuilt.set_item("type", "function")?;
        rebuilt.set_item("function", function)?;
        rebuilt.into_any()
    };
    Ok(ReadCall {
        id,
        name,
        raw,
        wire,
        checked,
    })
}

/// A call that passed the gates, kept on its record until it is run: its entry, its arguments
/// in both forms, and whether it has started and finished. Whoever finishes a call first
/// (the tool's return or its timeout) writes the record; the other is dropped.
#[pyclass(module = "agentmaker._native", name = "PreparedCall", frozen)]
pub struct PyPreparedCall {
    pub entry: Arc<PyEntry>,
    pub args: Value,
    pub params: Py<PyDict>,
    pub kind: Kind,
    /// The worker settings when the call runs isolated.
    pub isolation: Option<Py<PyAny>>,
    started: AtomicBool,
    done: AtomicBool,
    in_batch: AtomicBool,
}

impl PyPreparedCall {
    pub fn new(
        entry: Arc<PyEntry>,
        args: Value,
        params: Py<PyDict>,
        kind: Kind,
        isolation: Option<Py<PyAny>>,
    ) -> Self {
        PyPreparedCall {
            entry,
            args,
            params,
            kind,
            isolation,
            started: AtomicBool::new(false),
            done: AtomicBool::new(false),
            in_batch: AtomicBool::new(false),
        }
    }

    /// Marks the call started; true the first time (so a run counts each execution once).
    pub fn start(&self) -> bool {
        !self.started.swap(true, Ordering::AcqRel)
    }

    /// Marks the call finished; true for the first outcome, which is the one that counts.
    pub fn finish(&self) -> bool {
        !self.done.swap(true, Ordering::AcqRel)
    }

    /// Whether the call runs in a batch beside others (set when the response is planned).
    pub fn in_batch(&self) -> bool {
        self.in_batch.load(Ordering::Relaxed)
    }

    pub fn set_in_batch(&self, yes: bool) {
        self.in_batch.store(yes, Ordering::Relaxed);
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

#[pymethods]
impl PyPreparedCall {
    fn __repr__(&self) -> String {
        format!(
            "PreparedCall({:?}, kind={:?})",
            self.entry.name(),
            self.kind.as_str()
        )
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.params)?;
        if let Some(i) = &self.isolation {
            visit.call(i)?;
        }
        Ok(())
    }
}
