//! The `ToolCallRecord` (a Python object, `agentmaker.tools.call_record`) the pipeline makes and fills
//! for each call: made here, read back through its native prepared call.

use super::call::{PyPreparedCall, ReadCall};
use crate::executor::{CallStatus, Refusal, Route};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;

/// The record class (`ToolCallRecord`, from the hooks table).
pub fn record_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    Ok(crate::py::hooks::hooks(py)?.record_class.bind(py))
}

/// A status as the record's interned word, made once per process (a call's record is given
/// one on every call).
pub fn status_word(py: Python<'_>, status: CallStatus) -> Bound<'_, PyString> {
    static WORDS: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();
    let words = WORDS.get_or_init(py, || {
        CallStatus::ALL
            .iter()
            .map(|s| PyString::intern(py, s.as_str()).unbind())
            .collect()
    });
    words[status as usize].bind(py).clone()
}

/// Where a call runs, as the record's `_route` word.
pub fn route_word(py: Python<'_>, route: Route) -> &Bound<'_, PyString> {
    match route {
        Route::Inline => intern!(py, "inline"),
        Route::Thread => intern!(py, "thread"),
        Route::Await => intern!(py, "await"),
    }
}

/// The record of a call a gate refused: its id, the name (as sent, or the real one once
/// found), the arguments, the refusal, and the call as the transcript records it.
pub fn refused<'py>(
    py: Python<'py>,
    read: &ReadCall<'py>,
    name: &Bound<'py, PyAny>,
    arguments: &Bound<'py, PyAny>,
    refusal: Refusal,
) -> PyResult<Bound<'py, PyAny>> {
    record_class(py)?.call1((
        &read.id,
        name,
        arguments,
        status_word(py, refusal.status),
        refusal.text,
        &read.wire,
    ))
}

/// A finished call's text with the note on what was repaired in its arguments, from the
/// record's list (a resumed call carries over the repairs of the call that paused).
pub fn with_repair_note(record: &Bound<'_, PyAny>, text: String, status: CallStatus) -> String {
    let py = record.py();
    let repairs: Vec<String> = record
        .getattr(intern!(py, "repairs"))
        .and_then(|r| r.extract())
        .unwrap_or_default();
    crate::executor::finish::with_repair_note(text, status, &repairs)
}

/// The native prepared call a record holds.
pub fn prepared_call<'py>(record: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyPreparedCall>> {
    let py = record.py();
    Ok(record
        .getattr(intern!(py, "_call"))?
        .cast_into::<PyPreparedCall>()?)
}
