//! The workspace tools for Python: each core [`WorkspaceTool`] behind the `Tool` base class, and
//! the function `agentmaker.Workspace` builds them with.

use crate::builtins::workspace::{Workspace, WorkspaceOptions, WorkspaceSetupError, WorkspaceTool};
use crate::error::ConfigError;
use crate::py::settings::positive;
use crate::py::tool::PyTool;
use crate::tool::NativeTool;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// One tool of a ``Workspace`` (``ls``, ``read_file``, ``glob``, ``grep``, ``write_file``,
/// ``edit_file`` or ``multi_edit``). Built by ``Workspace``, not directly.
#[pyclass(module = "agentmaker", name = "WorkspaceTool", extends = PyTool, frozen)]
pub struct PyWorkspaceTool {
    core: Arc<WorkspaceTool>,
}

#[pymethods]
impl PyWorkspaceTool {
    /// Construction happens in ``Workspace``; this only stops ``Tool.__init__`` from running.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(
        &self,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) {
    }

    /// Read tools run in parallel with each other; write tools one at a time.
    #[getter]
    fn supports_parallel(&self) -> bool {
        self.core.spec().supports_parallel
    }

    /// Read results are the workspace's files: external content, wrapped before the model reads it.
    #[getter]
    fn external_content(&self) -> bool {
        self.core.spec().external_content
    }

    /// True for ``ls``, ``read_file``, ``glob`` and ``grep``.
    #[getter]
    fn read_only(&self) -> bool {
        self.core.read_only()
    }

    /// True for ``write_file``, ``edit_file`` and ``multi_edit``.
    #[getter]
    fn destructive(&self) -> bool {
        self.core.destructive()
    }

    #[getter]
    fn idempotent(&self) -> bool {
        self.core.idempotent()
    }

    /// The workspace tools touch only local files.
    #[getter]
    fn open_world(&self) -> bool {
        false
    }
}

/// Builds a workspace's tools: ``(tools, instructions, absolute root)``.
#[pyfunction]
#[pyo3(signature = (root, *, read_only, deny, read_before_write, read_lines, max_line_chars, max_read_bytes, max_entries, max_output_bytes, prompts))]
pub fn _workspace_tools(
    py: Python<'_>,
    root: PathBuf,
    read_only: bool,
    deny: Option<Vec<String>>,
    read_before_write: bool,
    read_lines: i64,
    max_line_chars: i64,
    max_read_bytes: i64,
    max_entries: i64,
    max_output_bytes: i64,
    prompts: Option<HashMap<String, String>>,
) -> PyResult<(Vec<Py<PyWorkspaceTool>>, String, PathBuf)> {
    let opts = WorkspaceOptions {
        read_only,
        deny,
        read_before_write,
        read_lines: positive("read_lines", read_lines)?,
        max_line_chars: positive("max_line_chars", max_line_chars)?,
        max_read_bytes: positive("max_read_bytes", max_read_bytes)?,
        max_entries: positive("max_entries", max_entries)?,
        max_output_bytes: positive("max_output_bytes", max_output_bytes)?,
        prompts,
    };
    let ws = Workspace::new(&root, opts).map_err(|e| match e {
        WorkspaceSetupError::Config(msg) => PyErr::from(ConfigError::Invalid(msg)),
        WorkspaceSetupError::Io { errno, message } => PyOSError::new_err((errno, message)),
    })?;
    let tools = ws
        .tools()
        .into_iter()
        .map(|core| {
            Py::new(
                py,
                PyTool::native_subclass(core.clone(), PyWorkspaceTool { core }),
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((tools, ws.instructions(), ws.root().to_path_buf()))
}
