//! MCPTool: one remote tool as a registry tool; its calls go through the package's one
//! tokio-asyncio bridge.

use crate::mcp::client::McpTool;
use crate::py::bridge;
use crate::py::convert::py_to_value;
use crate::py::coroutines::await_method;
use crate::py::response::PyToolResponse;
use crate::py::tool::PyTool;
use crate::tool::NativeTool;
use pyo3::prelude::*;
use std::sync::Arc;

/// A tool offered by an MCP server (see :class:`MCPClient`). ``name`` is
/// ``{namespace}_{remote name}`` made legal and unique, ``origin`` is ``"mcp:{namespace}"``,
/// results are external content, and ``fingerprint`` is the sha256 of the definition the
/// server sent (see the README section "MCP fingerprints").
#[pyclass(module = "agentmaker._native", name = "MCPTool", extends = PyTool, frozen)]
pub struct PyMcpTool {
    tool: Arc<McpTool>,
}

impl PyMcpTool {
    /// Sends the call on the running loop and returns its future (what ``arun`` awaits); the
    /// registry calls this with the arguments it already converted and validated.
    pub fn start<'py>(
        &self,
        py: Python<'py>,
        args: serde_json::Value,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (waiter, completer, on_cancel) = bridge::pending_for_loop(py)?;
        self.send(completer, on_cancel, args);
        Ok(waiter)
    }

    fn send(
        &self,
        completer: bridge::Completer,
        on_cancel: bridge::OnCancel,
        args: serde_json::Value,
    ) {
        let completer = completer.if_lost(Box::new(|py: Python<'_>| {
            let text = crate::executor::messages::mcp_call_abandoned();
            Ok(Py::new(py, PyToolResponse::error_text(py, text))?.into_any())
        }));
        let call = self.tool.call_then(args, move |resp| {
            completer.complete(Box::new(move |py: Python<'_>| {
                Ok(Py::new(py, PyToolResponse::from_core(py, resp)?)?.into_any())
            }))
        });
        on_cancel.set(move || call.cancel());
    }

    pub(super) fn create(py: Python<'_>, tool: McpTool) -> PyResult<Py<PyMcpTool>> {
        let tool = Arc::new(tool);
        let spec = tool.spec();
        let base = PyTool {
            name: spec.name.clone(),
            description: spec.description.clone(),
            origin: tool.origin().to_string(),
            native: Some(tool.clone() as Arc<dyn NativeTool>),
            kept: std::sync::Mutex::new(None),
        };
        Py::new(
            py,
            PyClassInitializer::from(base).add_subclass(PyMcpTool { tool }),
        )
    }
}

#[pymethods]
impl PyMcpTool {
    /// The tool's name on the server (what ``tools/call`` receives).
    #[getter]
    fn remote_name(&self) -> &str {
        self.tool.remote_name()
    }

    /// sha256 (hex) of the definition as the server sent it; pin it with ``expected_fingerprints``.
    #[getter]
    fn fingerprint(&self) -> &str {
        self.tool.fingerprint()
    }

    /// Set per client (``MCPClient(requires_confirmation=...)``); True by default.
    #[getter]
    fn requires_confirmation(&self) -> bool {
        self.tool.spec().requires_confirmation
    }

    #[classattr]
    fn external_content() -> bool {
        true
    }

    #[classattr]
    fn supports_parallel() -> bool {
        true
    }

    /// Call the remote tool; returns a coroutine resolving to a ToolResponse (errors,
    /// timeouts and a closed session are error responses, never exceptions). The call is sent
    /// when the coroutine runs, after the arguments are validated against the tool's input
    /// schema (invalid ones are an error response and never reach the server); cancelling the task that runs it cancels the call (the server
    /// is sent ``notifications/cancelled``).
    fn arun<'py>(
        slf: &Bound<'py, Self>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        await_method(slf.as_any(), "_arun_on_loop", vec![parameters.clone()])
    }

    /// What ``arun``'s coroutine awaits: sends the call now, on the running loop, and returns
    /// its future (cancelling it cancels the call).
    fn _arun_on_loop<'py>(
        slf: &Bound<'py, Self>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let tool = &slf.get().tool;
        let checked = match py_to_value(parameters) {
            // None has always meant "no arguments" here.
            Ok(serde_json::Value::Null) => tool.check_direct_args(serde_json::json!({})),
            Ok(args) => tool.check_direct_args(args),
            Err(e) => Err(crate::executor::messages::mcp_arguments_not_json(
                &e.describe(),
            )),
        };
        match checked {
            Ok(args) => slf.get().start(py, args),
            Err(text) => {
                let resp = PyToolResponse::error_text(py, text);
                let done = py
                    .import("asyncio")?
                    .call_method0("get_running_loop")?
                    .call_method0("create_future")?;
                done.call_method1("set_result", (resp,))?;
                Ok(done)
            }
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<MCPTool name={:?} remote_name={:?} origin={:?}>",
            self.tool.spec().name,
            self.tool.remote_name(),
            self.tool.origin()
        )
    }
}
