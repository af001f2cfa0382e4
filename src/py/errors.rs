//! Core errors as Python exceptions: one `From<DomainError> for PyErr` per error enum of the
//! core, each variant raising its own class. The classes live in `agentmaker/errors.py`
//! (multiple inheritance such as `ToolRegistrationError(ToolError, ValueError)` is natural
//! there) and reach the binding through the hooks table ([`super::hooks`]); each is a subclass
//! of the class the variant raised before it had its own, so existing `except` clauses still
//! catch it.

use crate::builtins::notes::NotesSetupError;
use crate::error::{ConfigError, RegistrationError};
use crate::guard::GuardError;
use crate::isolation::LimitError;
use crate::llm::LlmError;
use crate::mcp::client::McpError;
use crate::rag::RagError;
use crate::run_policy::PolicyError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// One exception class of `agentmaker.errors`, read from the hooks table on first use.
pub struct Class {
    name: &'static str,
    cell: &'static PyOnceLock<Py<PyType>>,
}

/// `class!("Name")`: the class `agentmaker.errors.Name`, cached where it is named.
macro_rules! class {
    ($name:literal) => {{
        static CELL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
        Class {
            name: $name,
            cell: &CELL,
        }
    }};
}

impl Class {
    pub fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyType>> {
        self.cell
            .get_or_try_init(py, || {
                let errors = super::hooks::hooks(py)?.errors.bind(py);
                Ok::<_, PyErr>(errors.getattr(self.name)?.cast_into::<PyType>()?.unbind())
            })
            .map(|t| t.bind(py).clone())
    }

    /// The exception with `message`.
    pub fn err(&self, message: String) -> PyErr {
        self.err_with(|py| PyTuple::new(py, [message]))
    }

    /// The exception made with the arguments `args` builds (`OSError(errno, message)`).
    fn err_with(
        &self,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> PyErr {
        Python::attach(|py| {
            let made = self.get(py).and_then(|cls| cls.call1(args(py)?));
            match made {
                Ok(exc) => PyErr::from_value(exc),
                Err(e) => e,
            }
        })
    }
}

/// `ToolRegistrationError`: a tool object that cannot be registered as written (its Python
/// shape: no name, a `get_parameters()` that returns something else ...).
pub fn definition(message: String) -> PyErr {
    class!("ToolRegistrationError").err(message)
}

/// `ToolConfigError`: a Python value a built-in or a `ToolParameter` cannot take.
pub fn tool_config(message: String) -> PyErr {
    class!("ToolConfigError").err(message)
}

/// `ToolError`: a call's result lost on the way back (its future dropped unsettled).
pub fn tool_error(message: String) -> PyErr {
    class!("ToolError").err(message)
}

/// `StopAgentRun`: a tool's request to end the run.
pub fn stop_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    class!("StopAgentRun").get(py)
}

/// `RetryAgentRun`: a tool's request that the model try again.
pub fn retry_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    class!("RetryAgentRun").get(py)
}

/// The flow-control base class: exceptions of this kind are signals to the Agent loop and pass
/// through the registry instead of becoming error responses.
pub fn flow_control_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    class!("AgentRunFlow").get(py)
}

impl From<RegistrationError> for PyErr {
    fn from(err: RegistrationError) -> PyErr {
        let class = match &err {
            RegistrationError::IllegalName { .. } | RegistrationError::StrictName { .. } => {
                class!("ToolNameError")
            }
            RegistrationError::NameRule { .. } => class!("NameRuleError"),
            RegistrationError::Duplicate { .. } => class!("DuplicateToolError"),
            RegistrationError::InvalidSchema { .. } => class!("ToolSchemaError"),
            RegistrationError::InvalidParameters { .. } => class!("ToolParametersError"),
            RegistrationError::ConflictMode { .. } => class!("ConflictModeError"),
        };
        class.err(err.to_string())
    }
}

impl From<ConfigError> for PyErr {
    fn from(err: ConfigError) -> PyErr {
        let class = match &err {
            ConfigError::UnknownPromptKey { .. } => class!("UnknownPromptKeyError"),
            ConfigError::Invalid(_) => class!("InvalidToolConfigError"),
        };
        class.err(err.to_string())
    }
}

impl From<McpError> for PyErr {
    fn from(err: McpError) -> PyErr {
        let class = match &err {
            McpError::Config(_) => class!("MCPConfigError"),
            McpError::AlreadyConnected => class!("MCPAlreadyConnectedError"),
            McpError::ClosedWhileConnecting => class!("MCPClosedWhileConnectingError"),
            McpError::NotConnected => class!("MCPNotConnectedError"),
            McpError::Forked => class!("MCPForkedError"),
            McpError::Spawn { .. } => class!("MCPSpawnError"),
            McpError::Handshake { .. } => class!("MCPHandshakeError"),
            McpError::HandshakeTimeout { .. } => class!("MCPHandshakeTimeoutError"),
            McpError::ListTimeout { .. } => class!("MCPListTimeoutError"),
            McpError::List { .. } => class!("MCPListError"),
            McpError::Catalog(_) => class!("MCPCatalogError"),
        };
        class.err(err.to_string())
    }
}

/// A failed model call: `LLMResponseError`'s subclasses carry the `status` and `body` the
/// server sent (when it sent one); a call that cannot be sent as given is `LLMRequestError`.
impl From<LlmError> for PyErr {
    fn from(err: LlmError) -> PyErr {
        let class = match &err {
            LlmError::Status { .. } => class!("LLMStatusError"),
            LlmError::Timeout { .. } => class!("LLMTimeoutError"),
            LlmError::Unreachable { .. } => class!("LLMConnectionError"),
            LlmError::Reply(_) => class!("LLMReplyError"),
            LlmError::Request(_) => return class!("LLMRequestError").err(err.to_string()),
        };
        Python::attach(|py| {
            let made = class.get(py).and_then(|cls| {
                let kwargs = PyDict::new(py);
                kwargs.set_item("status", err.status())?;
                kwargs.set_item("body", err.body())?;
                cls.call((err.to_string(),), Some(&kwargs))
            });
            match made {
                Ok(exc) => PyErr::from_value(exc),
                Err(e) => e,
            }
        })
    }
}

impl From<RagError> for PyErr {
    fn from(err: RagError) -> PyErr {
        let class = match &err {
            RagError::BadK1(_) => class!("BM25K1Error"),
            RagError::BadB(_) => class!("BM25BError"),
            RagError::Dimension { .. } => class!("EmbeddingDimensionError"),
            RagError::NonFinite { .. } => class!("EmbeddingNotFiniteError"),
            RagError::EmptyVector { .. } => class!("EmptyEmbeddingError"),
        };
        class.err(err.to_string())
    }
}

impl From<PolicyError> for PyErr {
    fn from(err: PolicyError) -> PyErr {
        let class = match &err {
            PolicyError::BadCount { .. } => class!("RunPolicyCountError"),
            PolicyError::BadDeadline { .. } => class!("RunPolicyDeadlineError"),
        };
        class.err(err.to_string())
    }
}

impl From<GuardError> for PyErr {
    fn from(err: GuardError) -> PyErr {
        let class = match &err {
            GuardError::BadBoundaryLength { .. } => class!("GuardBoundaryLengthError"),
            GuardError::BadBoundaryChars => class!("GuardBoundaryCharsError"),
            GuardError::HeaderWithoutBoundary => class!("GuardHeaderError"),
        };
        class.err(err.to_string())
    }
}

impl From<NotesSetupError> for PyErr {
    fn from(err: NotesSetupError) -> PyErr {
        match err {
            NotesSetupError::Config(msg) => class!("NotesConfigError").err(msg),
            NotesSetupError::Permission(msg) => class!("NotesPermissionError").err(msg),
            NotesSetupError::Io { errno, message } => {
                class!("NotesIOError").err_with(|py| (errno, message).into_pyobject(py))
            }
        }
    }
}

impl From<LimitError> for PyErr {
    fn from(err: LimitError) -> PyErr {
        class!("WorkerSetupError").err(err.to_string())
    }
}
