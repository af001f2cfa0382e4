//! `NotesTool` for Python: the core [`NotesTool`] behind the `Tool` base class.

use crate::builtins::notes::{NotesOptions, NotesTool};
use crate::py::settings::positive;
use crate::py::tool::PyTool;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Read and append note files under ``root`` (tool name ``notes``; parameters ``action``
/// (``read``/``append``), ``path``, ``content``).
///
/// A missing root is created with mode 0700. An existing root must be a real directory (not a
/// symlink; else ``ToolConfigError``) owned by the current user without group/other permissions
/// (else ``PermissionError``); other I/O failures raise ``OSError``. The root is opened once
/// here and every call walks from that descriptor without following symlinks; hidden, empty and
/// ``..`` components are refused, and only singly linked regular files are used. Appends need
/// confirmation, reads do not; a read result is external content.
#[pyclass(module = "agentmaker", name = "NotesTool", extends = PyTool, frozen)]
pub struct PyNotesTool {
    core: Arc<NotesTool>,
}

#[pymethods]
impl PyNotesTool {
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

    #[new]
    #[pyo3(signature = (root, *, max_read_chars = 8000, max_append_chars = 50_000, max_file_bytes = 2_000_000, prompts = None))]
    fn new(
        root: PathBuf,
        max_read_chars: i64,
        max_append_chars: i64,
        max_file_bytes: i64,
        prompts: Option<HashMap<String, String>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let opts = NotesOptions {
            max_read_chars: positive("max_read_chars", max_read_chars)?,
            max_append_chars: positive("max_append_chars", max_append_chars)?,
            max_file_bytes: positive("max_file_bytes", max_file_bytes)?,
            prompts,
        };
        let core = Arc::new(NotesTool::new(&root, opts)?);
        Ok(PyTool::native_subclass(core.clone(), PyNotesTool { core }))
    }

    /// The absolute notes root.
    #[getter]
    fn root(&self) -> PathBuf {
        self.core.root().to_path_buf()
    }
}
