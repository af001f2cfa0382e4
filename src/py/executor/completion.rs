//! How an agent's awaited call ends: the started call ([`PyStartedCall`]) reports its value or
//! exception here, and the run's pipeline fills the call's record.

use super::call::PyPreparedCall;
use super::PyCallPipeline;
use crate::executor::Outcome;
use crate::py::registry::Completion;
use crate::py::response::PyToolResponse;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use std::time::Instant;

/// The record an agent's awaited call fills when it ends.
pub struct RecordCompletion {
    pub pipeline: Py<PyCallPipeline>,
    pub record: Py<PyAny>,
    pub call: Py<PyPreparedCall>,
    pub started: Instant,
}

impl Completion for RecordCompletion {
    fn returned(&self, py: Python<'_>, resp: &Bound<'_, PyToolResponse>) -> PyResult<()> {
        let elapsed = self.started.elapsed().as_secs_f64();
        self.pipeline.get().complete_response(
            py,
            self.record.bind(py),
            self.call.get(),
            resp,
            elapsed,
        )
    }

    fn raised(&self, py: Python<'_>, err: PyErr) -> PyResult<()> {
        let elapsed = self.started.elapsed().as_secs_f64();
        self.pipeline
            .get()
            .complete_error(py, self.record.bind(py), self.call.get(), err, elapsed)
    }

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.record)
    }
}

/// What a flow-control signal asks of the run, or the error itself when it is none.
pub fn flow_outcome(py: Python<'_>, err: PyErr) -> PyResult<Outcome> {
    let exc = err.value(py);
    let message = || -> String {
        exc.getattr(intern!(py, "message"))
            .and_then(|m| m.str().map(|s| s.to_string()))
            .unwrap_or_default()
    };
    if exc.is_instance(crate::py::errors::stop_class(py)?.as_any())? {
        return Ok(Outcome::Stop(message()));
    }
    if exc.is_instance(crate::py::errors::retry_class(py)?.as_any())? {
        return Ok(Outcome::Retry(message()));
    }
    Err(err)
}
