//! The Python exception tree lives in `agentmaker/errors.py` (multiple inheritance such as
//! `ToolRegistrationError(ToolError, ValueError)` is natural there); this module raises those
//! classes from Rust, each core error variant to its own class.

use crate::error::{ConfigError, RegistrationError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

fn errors_module_class(
    py: Python<'_>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<Py<PyType>> {
    cell.get_or_try_init(py, || {
        let module = py.import("agentmaker.errors")?;
        Ok::<_, PyErr>(module.getattr(name)?.cast_into::<PyType>()?.unbind())
    })
    .map(|t| t.clone_ref(py))
}

macro_rules! python_error {
    ($fn_name:ident, $class:literal) => {
        pub fn $fn_name(py: Python<'_>, message: impl Into<String>) -> PyErr {
            static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            let message = message.into();
            match errors_module_class(py, &CELL, $class) {
                Ok(cls) => PyErr::from_type(cls.into_bound(py), message),
                Err(e) => e,
            }
        }
    };
}

python_error!(tool_registration_error, "ToolRegistrationError");
python_error!(tool_config_error, "ToolConfigError");
python_error!(tool_error, "ToolError");

/// `StopAgentRun`: a tool's request to end the run.
pub fn stop_class(py: Python<'_>) -> PyResult<Py<PyType>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    errors_module_class(py, &CELL, "StopAgentRun")
}

/// `RetryAgentRun`: a tool's request that the model try again.
pub fn retry_class(py: Python<'_>) -> PyResult<Py<PyType>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    errors_module_class(py, &CELL, "RetryAgentRun")
}

/// The flow-control base class: exceptions of this kind are signals to the Agent loop and pass
/// through the registry instead of becoming error responses.
pub fn flow_control_class(py: Python<'_>) -> PyResult<Py<PyType>> {
    static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    errors_module_class(py, &CELL, "AgentRunFlow")
}

pub fn registration(py: Python<'_>, err: RegistrationError) -> PyErr {
    tool_registration_error(py, err.to_string())
}

pub fn config(py: Python<'_>, err: ConfigError) -> PyErr {
    tool_config_error(py, err.to_string())
}
