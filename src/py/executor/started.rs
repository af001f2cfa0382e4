//! A call started on the event loop: what to await, and how what it gives becomes a result.
//! One protocol for `ToolRegistry.aexecute_tool` and for the agent's awaited calls: Python awaits
//! `awaitable`, then hands the value to `finish` or the exception to `fail`
//! (`agentmaker._awaited.complete`).

use super::call::PyPreparedCall;
use super::PyCallPipeline;
use crate::executor::Outcome;
use crate::py::registry::{
    exception_response, mcp_tool, wrap_callable_result, wrap_run_result, PyEntry, Runner,
};
use crate::py::response::PyToolResponse;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use std::time::Instant;

/// The record an agent's call fills when it ends.
pub struct Bound {
    pub pipeline: Py<PyCallPipeline>,
    pub record: Py<PyAny>,
    pub call: Py<PyPreparedCall>,
    pub started: Instant,
}

#[pyclass(module = "agentmaker._native", name = "StartedCall", frozen)]
pub struct PyStartedCall {
    name: String,
    /// An `@tool` function's value is converted like its sync result; a Tool's must be a
    /// ToolResponse or a str.
    callable: bool,
    #[pyo3(get)]
    awaitable: Py<PyAny>,
    bound: Option<Bound>,
}

/// Starts an admitted call: an MCP tool sends its call with the arguments validation already
/// converted; a plain `async def` tool is called with its keyword arguments (its value is
/// converted by `finish`); every other tool's `arun(parameters)` is called. What it returns is
/// what the caller awaits.
pub fn start_awaitable<'py>(
    py: Python<'py>,
    entry: &PyEntry,
    args: &Value,
    params: &pyo3::Bound<'py, PyAny>,
    isolation: Option<&Py<PyAny>>,
) -> PyResult<pyo3::Bound<'py, PyAny>> {
    if let Some(isolation) = isolation {
        return crate::py::registry::call_isolated(py, entry, params, isolation);
    }
    if let Runner::Native(native) = &entry.payload.runner {
        if native.awaitable() {
            if let Some(mcp) = mcp_tool(py, entry) {
                return mcp.get().start(py, args.clone());
            }
        }
    }
    if let Runner::Kwargs(call) = &entry.payload.runner {
        if call.is_async {
            let kwargs = call.kwargs(params.cast::<PyDict>()?)?;
            let value = call.func.bind(py).call((), Some(&kwargs))?;
            if value.hasattr(intern!(py, "__await__"))? {
                return Ok(value);
            }
            // Marked async but returned a plain value: await it as a finished future.
            let fut = py
                .import("asyncio")?
                .call_method0("get_running_loop")?
                .call_method0("create_future")?;
            fut.call_method1("set_result", (value,))?;
            return Ok(fut);
        }
    }
    entry
        .payload
        .obj
        .bind(py)
        .call_method1(intern!(py, "arun"), (params,))
}

impl PyStartedCall {
    /// `isolated`: the awaitable gives the ToolResponse a worker made.
    pub fn new(
        entry: &PyEntry,
        awaitable: Py<PyAny>,
        isolated: bool,
        bound: Option<Bound>,
    ) -> Self {
        PyStartedCall {
            name: entry.name().to_owned(),
            callable: matches!(entry.payload.runner, Runner::Kwargs(_)) && !isolated,
            awaitable,
            bound,
        }
    }
}

#[pymethods]
impl PyStartedCall {
    /// The awaited value as the call's result (and, for an agent's call, its record filled).
    fn finish(
        &self,
        py: Python<'_>,
        value: pyo3::Bound<'_, PyAny>,
    ) -> PyResult<Py<PyToolResponse>> {
        let resp = if self.callable {
            wrap_callable_result(py, &self.name, value)?
        } else {
            wrap_run_result(py, &self.name, value)?
        };
        if let Some(b) = &self.bound {
            let elapsed = b.started.elapsed().as_secs_f64();
            b.pipeline.get().complete_response(
                py,
                b.record.bind(py),
                b.call.get(),
                resp.bind(py),
                elapsed,
            )?;
        }
        Ok(resp)
    }

    /// An exception the awaited call raised, as an error result. For the registry a
    /// flow-control signal is raised again; for an agent's call it becomes the call's outcome.
    fn fail(
        &self,
        py: Python<'_>,
        exc: pyo3::Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyToolResponse>>> {
        let err = PyErr::from_value(exc);
        let Some(b) = &self.bound else {
            return exception_response(py, &self.name, err).map(Some);
        };
        let elapsed = b.started.elapsed().as_secs_f64();
        b.pipeline
            .get()
            .complete_error(py, b.record.bind(py), b.call.get(), err, elapsed)?;
        Ok(None)
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.awaitable)?;
        if let Some(b) = &self.bound {
            visit.call(&b.record)?;
        }
        Ok(())
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
