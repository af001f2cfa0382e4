//! `CLITool` for Python: the core [`CliTool`] behind the `Tool` base class.

use crate::builtins::cli::process::CancelToken;
use crate::builtins::cli::{ArgPolicyFn, CliOptions, CliTool};
use crate::py::bridge::Deliver;
use crate::py::convert::py_to_value;
use crate::py::errors;
use crate::py::response::PyToolResponse;
use crate::py::settings::positive;
use crate::py::tool::PyTool;
use crate::response::ToolResponse;
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{PyTraverseError, PyVisit};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Run one allow-listed local command (tool name ``shell``, parameter ``command``).
///
/// Only the programs in ``allowed_commands`` run; each is resolved to an absolute path now (a
/// program that cannot be found raises ``ToolConfigError``). No shell is involved: the command is
/// split with POSIX quoting and unquoted shell syntax (``; & | < > ( ) $ `` and backticks, a
/// leading ``#``, newlines) is refused. A dangerous-argument gate refuses inline code, launchers
/// and hook/output-file flags of known programs; ``arg_policy(argv) -> str | None`` replaces it
/// (a returned string refuses the call with that text). The child gets only ``PATH``, ``HOME``
/// and ``LANG`` (or exactly ``env``), stdin from /dev/null, its own session and process group;
/// on timeout, cancellation or output over the cap the whole group is killed and reaped.
/// A non-zero exit is returned as an error response that still carries the output; output cut
/// at the cap is ``partial``.
#[pyclass(module = "agentmaker", name = "CLITool", extends = PyTool, frozen)]
pub struct PyCliTool {
    core: Arc<CliTool>,
    arg_policy: Option<Py<PyAny>>,
}

fn string_dict(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let dict = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a dict of str to str")))?;
    let mut out = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        match (k.extract::<String>(), v.extract::<String>()) {
            (Ok(k), Ok(v)) => out.push((k, v)),
            _ => {
                return Err(errors::tool_config(format!(
                    "{what} must map str to str, got {}",
                    k.repr()?
                )))
            }
        }
    }
    Ok(out)
}

/// Wraps a Python `arg_policy` callable for the core (called off the GIL, so it re-attaches).
fn python_policy(policy: Py<PyAny>) -> Box<ArgPolicyFn> {
    Box::new(move |argv: &[String]| {
        Python::attach(|py| match policy.call1(py, (argv.to_vec(),)) {
            Ok(v) if v.is_none(py) => Ok(None),
            Ok(v) => v.extract::<String>(py).map(Some).map_err(|_| {
                let ty = v
                    .bind(py)
                    .get_type()
                    .qualname()
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                format!("arg_policy must return None or a str, got {ty}")
            }),
            Err(e) => Err(e.to_string()),
        })
    })
}

/// Cancels the command when dropped, i.e. when the awaiting asyncio task is cancelled and
/// its tokio task is aborted, dropping the Rust future.
struct CancelOnDrop(Arc<CancelToken>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[pymethods]
impl PyCliTool {
    /// Construction happens in ``__new__``; this only stops ``Tool.__init__`` from seeing the
    /// keyword arguments.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(
        &self,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) {
    }

    #[classattr]
    fn requires_confirmation() -> bool {
        true
    }

    #[classattr]
    fn external_content() -> bool {
        true
    }

    #[new]
    #[pyo3(signature = (allowed_commands = None, *, timeout = 10.0, max_output_chars = 4000, cwd = None, env = None, arg_policy = None, prompts = None))]
    fn new(
        py: Python<'_>,
        allowed_commands: Option<Vec<String>>,
        timeout: f64,
        max_output_chars: i64,
        cwd: Option<PathBuf>,
        env: Option<&Bound<'_, PyAny>>,
        arg_policy: Option<Py<PyAny>>,
        prompts: Option<HashMap<String, String>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let max_output_chars = positive("max_output_chars", max_output_chars)?;
        let env = env.map(|e| string_dict("env", e)).transpose()?;
        if let Some(p) = &arg_policy {
            if !p.bind(py).is_callable() {
                return Err(PyTypeError::new_err(
                    "arg_policy must be a callable taking the argv list",
                ));
            }
        }
        let opts = CliOptions {
            timeout,
            max_output_chars,
            cwd,
            env,
            arg_policy: arg_policy.as_ref().map(|p| python_policy(p.clone_ref(py))),
            prompts,
        };
        let allowed = allowed_commands.unwrap_or_default();
        let core = Arc::new(CliTool::new(&allowed, opts)?);
        Ok(PyTool::native_subclass(
            core.clone(),
            PyCliTool { core, arg_policy },
        ))
    }

    /// The allowed program names, sorted.
    #[getter]
    fn allowed_commands(&self) -> Vec<String> {
        self.core
            .programs()
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Allowed name -> absolute path of the executable pinned at construction.
    #[getter]
    fn programs(&self) -> HashMap<String, PathBuf> {
        self.core.programs().iter().cloned().collect()
    }

    /// Run the command without blocking the event loop; returns a coroutine. Cancelling the
    /// task that runs it kills the command's process group at once (and reaps it) instead of
    /// leaving it running.
    fn arun<'py>(
        slf: &Bound<'py, Self>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::py::coroutines::await_method(slf.as_any(), "_arun_on_loop", vec![parameters.clone()])
    }

    /// What ``arun``'s coroutine awaits: starts the command now, on the running loop, and
    /// returns the future of its response (cancelling the future cancels the command).
    fn _arun_on_loop<'py>(
        slf: &Bound<'py, Self>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let core = slf.get().core.clone();
        let args = if parameters.is_instance_of::<PyDict>() {
            py_to_value(parameters).map_err(|e| e.describe())
        } else {
            Err("expects its arguments as a JSON object (a dict)".to_string())
        };
        let token =
            Arc::new(CancelToken::new().map_err(|e| PyOSError::new_err((e as i32, e.desc())))?);
        // Cancelling the awaiting task aborts this at its await: the guard then cancels the
        // command.
        crate::py::bridge::spawn_abortable_for_loop(py, async move {
            let args = match args {
                Ok(args) => args,
                Err(why) => {
                    let text = crate::executor::messages::unusable_arguments("shell", &why);
                    return deliver_response(ToolResponse::error(text));
                }
            };
            let guard = CancelOnDrop(token.clone());
            let worker =
                tokio::task::spawn_blocking(move || core.call_cancellable(&args, Some(&token)));
            let resp = worker.await;
            drop(guard);
            match resp {
                Ok(resp) => deliver_response(resp),
                Err(e) => deliver_response(ToolResponse::error(
                    crate::executor::messages::tool_failed("shell", &e.to_string()),
                )),
            }
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(p) = &self.arg_policy {
            visit.call(p)?;
        }
        Ok(())
    }
}

/// What the shell's future resolves to: `resp` as a ToolResponse, made on the loop thread.
fn deliver_response(resp: ToolResponse) -> Deliver {
    Box::new(move |py| Ok(Py::new(py, PyToolResponse::from_core(py, resp)?)?.into_any()))
}
