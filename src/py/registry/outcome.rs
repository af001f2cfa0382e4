//! What a call comes back as: running an admitted call, and turning what a tool returned or
//! raised into the ToolResponse the model reads.

use super::entry::{PyEntry, Runner};
use crate::executor::messages;
use crate::py::convert::{py_to_value, type_name};
use crate::py::errors::flow_control_class;
use crate::py::response::PyToolResponse;
use crate::py::tool::call_native;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

pub(super) fn error_response(py: Python<'_>, text: String) -> PyResult<Py<PyToolResponse>> {
    Py::new(py, PyToolResponse::error_text(py, text))
}

/// Turns an exception raised by a tool into an error response. Flow-control signals for the
/// Agent loop and non-`Exception` errors (KeyboardInterrupt, SystemExit) propagate.
const MAX_EXCEPTION_CHARS: usize = 2000;

pub fn exception_response(py: Python<'_>, tool: &str, err: PyErr) -> PyResult<Py<PyToolResponse>> {
    let exc = err.value(py);
    if exc.is_instance(flow_control_class(py)?.as_any())?
        || !exc.is_instance_of::<pyo3::exceptions::PyException>()
        || crate::py::isolation::is_worker_limit(exc)
    {
        return Err(err);
    }
    let ty = type_name(exc);
    let msg = exc.str().map(|s| s.to_string()).unwrap_or_default();
    // The model needs the gist; a tool that puts a whole payload into its exception must not
    // flood the context (the full text stays in the logged traceback).
    let msg = crate::validation::truncate(&msg, MAX_EXCEPTION_CHARS);
    let text = if msg.is_empty() {
        messages::raised(tool, &ty)
    } else {
        messages::raised(tool, &format!("{ty}: {msg}"))
    };
    log_tool_exception(py, tool, &err, &text);
    error_response(py, text)
}

/// The model gets the one-line error; the developer gets the traceback: a WARNING with
/// `exc_info` on the `agentmaker.tools` logger (a child of `agentmaker`). Flow-control signals
/// never get here.
fn log_tool_exception(py: Python<'_>, tool: &str, err: &PyErr, told: &str) {
    static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let logger = LOGGER.get_or_try_init(py, || {
        py.import("logging")?
            .getattr("getLogger")?
            .call1(("agentmaker.tools",))
            .map(Bound::unbind)
    });
    if let Ok(logger) = logger {
        let exc = err.value(py);
        // The traceback travels beside the exception in a PyErr: put it back on the exception,
        // so the log record (and anyone holding the exception) sees where the tool failed.
        if let Some(tb) = err.traceback(py) {
            if exc.getattr("__traceback__").is_ok_and(|t| t.is_none()) {
                let _ = exc.setattr("__traceback__", tb);
            }
        }
        let kwargs = PyDict::new(py);
        let _ = kwargs.set_item("exc_info", exc);
        let _ = logger.bind(py).call_method(
            "warning",
            (
                "tool %r raised an exception; the model was told: %s",
                tool,
                told,
            ),
            Some(&kwargs),
        );
    }
}

/// Wraps what a Tool subclass's `run` returned: a ToolResponse, or a str as a success.
pub fn wrap_run_result(
    py: Python<'_>,
    tool: &str,
    result: Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    if let Ok(resp) = result.cast::<PyToolResponse>() {
        return Ok(resp.clone().unbind());
    }
    if let Ok(s) = result.cast::<PyString>() {
        return Py::new(
            py,
            PyToolResponse::new_py(
                py,
                s.to_str()?.to_owned(),
                crate::response::ToolStatus::Success,
                None,
            ),
        );
    }
    error_response(py, messages::not_a_response(tool, &type_name(&result)))
}

/// Wraps what an `@tool` function returned: str and ToolResponse as they are, None as an
/// empty success, JSON values as compact JSON text with the value kept in `data`, and anything
/// else through the package's `result_to_response` hook (dataclasses, pydantic models, Enums
/// ... or an error response naming a type that has no JSON form). The one owner of these rules:
/// Python reaches it through `_tool_result`.
pub fn wrap_callable_result(
    py: Python<'_>,
    tool: &str,
    result: Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    if result.is_instance_of::<PyToolResponse>() || result.is_instance_of::<PyString>() {
        return wrap_run_result(py, tool, result);
    }
    if result.is_none() {
        return Py::new(
            py,
            PyToolResponse::new_py(
                py,
                String::new(),
                crate::response::ToolStatus::Success,
                None,
            ),
        );
    }
    if let Ok(value) = py_to_value(&result) {
        let text = serde_json::to_string(&value).unwrap_or_default();
        return Py::new(
            py,
            PyToolResponse::new_py(
                py,
                text,
                crate::response::ToolStatus::Success,
                Some(result.unbind()),
            ),
        );
    }
    let convert = crate::py::hooks::hooks(py)?.result_to_response.bind(py);
    let converted = convert.call1((tool, result))?;
    wrap_run_result(py, tool, converted)
}

/// `_native._tool_result(tool, value)`: a tool function's return value as its ToolResponse
/// (the rules of [`wrap_callable_result`]), for the callable tools run from Python.
#[pyfunction]
pub fn _tool_result(
    py: Python<'_>,
    tool: &str,
    value: Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    wrap_callable_result(py, tool, value)
}

/// Runs a tool whose arguments passed `admit`, and wraps the result. `isolated`: the tool runs
/// in a worker process with these settings, waited for at most the timeout given.
pub(crate) fn run_admitted(
    py: Python<'_>,
    name: &str,
    entry: &PyEntry,
    args: &Value,
    parameters: &Bound<'_, PyAny>,
    isolated: Option<(&Py<PyAny>, Option<f64>)>,
) -> PyResult<Py<PyToolResponse>> {
    let obj = entry.payload.obj.bind(py);
    if let Some((isolation, timeout)) = isolated {
        return match super::isolate::call_sync(py, entry, parameters, isolation, timeout) {
            Ok(resp) => Ok(resp),
            Err(err) => exception_response(py, name, err),
        };
    }
    match &entry.payload.runner {
        Runner::Native(native) => Py::new(py, call_native(py, native, args)?),
        Runner::Run => match obj.call_method1(pyo3::intern!(py, "run"), (parameters,)) {
            Ok(result) => wrap_run_result(py, name, result),
            Err(err) => exception_response(py, name, err),
        },
        // An async function on the blocking path: the tool's own `run` drives it.
        Runner::Kwargs(call) if call.is_async => {
            match obj.call_method1(pyo3::intern!(py, "run"), (parameters,)) {
                Ok(result) => wrap_run_result(py, name, result),
                Err(err) => exception_response(py, name, err),
            }
        }
        Runner::Kwargs(call) => {
            let kwargs = call.kwargs(parameters.cast::<PyDict>()?)?;
            match call.func.bind(py).call((), Some(&kwargs)) {
                Ok(result) => wrap_callable_result(py, name, result),
                Err(err) => exception_response(py, name, err),
            }
        }
        Runner::AsyncOnly => error_response(py, messages::async_only(name)),
    }
}
