//! How an agent's awaited call ends: the started call ([`PyStartedCall`]) reports its value or
//! exception here, and the run's pipeline fills the call's record.

use super::call::PyPreparedCall;
use super::PyCallPipeline;
use crate::executor::Outcome;
use crate::py::registry::{exception_problem, exception_response, Completion};
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

impl PyCallPipeline {
    /// A started call's returned response becomes its record's outcome.
    pub(crate) fn complete_response(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        call: &PyPreparedCall,
        resp: &Bound<'_, PyToolResponse>,
        elapsed: f64,
    ) -> PyResult<()> {
        let r = resp.borrow();
        let outcome = Outcome::Returned {
            text: r.text.clone(),
            status: r.status,
        };
        let data = r.data.bind(py).clone();
        drop(r);
        self.write(py, record, call, outcome, Some(data), elapsed)
    }

    /// An exception a started call raised: a flow-control signal is the call's outcome; any
    /// other exception becomes the error the model reads.
    pub(crate) fn complete_error(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        call: &PyPreparedCall,
        err: PyErr,
        elapsed: f64,
    ) -> PyResult<()> {
        self.enter(call);
        let err = match flow_outcome(py, err) {
            Ok(outcome) => return self.write(py, record, call, outcome, None, elapsed),
            Err(err) => err,
        };
        if !err.is_instance_of::<pyo3::exceptions::PyException>(py) {
            return Err(err); // KeyboardInterrupt, SystemExit, CancelledError: not the tool's result
        }
        match exception_response(py, call.entry.name(), err) {
            Ok(resp) => self.complete_response(py, record, call, resp.bind(py), elapsed),
            Err(err) => {
                let problem = exception_problem(py, &err);
                self.write(py, record, call, Outcome::Raised(problem), None, elapsed)
            }
        }
    }
}
