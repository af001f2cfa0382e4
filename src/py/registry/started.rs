//! A call started on the event loop: what to await, and how what it gives becomes a result.
//! One protocol for `ToolRegistry.aexecute_tool` and for the agent's awaited calls: Python awaits
//! `awaitable`, then hands the value to `finish` or the exception to `fail`
//! (`agentmaker.tools.awaited.complete`).

use super::outcome::{exception_response, wrap_callable_result, wrap_run_result};
use super::{mcp_tool, PyEntry, Runner};
use crate::py::response::PyToolResponse;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{PyTraverseError, PyVisit};
use serde_json::Value;

/// Where an agent's awaited call reports how it ended (the run's pipeline fills its record).
/// The registry's own calls (`aexecute_tool`) have none: their result is the response.
pub trait Completion: Send + Sync {
    fn returned(&self, py: Python<'_>, resp: &pyo3::Bound<'_, PyToolResponse>) -> PyResult<()>;
    fn raised(&self, py: Python<'_>, err: PyErr) -> PyResult<()>;
    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError>;
}

#[pyclass(module = "agentmaker._native", name = "StartedCall", frozen)]
pub struct PyStartedCall {
    name: String,
    /// An `@tool` function's value is converted like its sync result; a Tool's must be a
    /// ToolResponse or a str.
    callable: bool,
    #[pyo3(get)]
    awaitable: Py<PyAny>,
    bound: Option<Box<dyn Completion>>,
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
        return super::isolate::call_async(py, entry, params, isolation);
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
        bound: Option<Box<dyn Completion>>,
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
            b.returned(py, resp.bind(py))?;
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
        b.raised(py, err)?;
        Ok(None)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.awaitable)?;
        if let Some(b) = &self.bound {
            b.traverse(&visit)?;
        }
        Ok(())
    }
}
