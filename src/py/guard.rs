//! The anti-injection guard for Python (the agent makes one per run).

use crate::guard::Guard;
use pyo3::prelude::*;

/// Wraps external tool output before the model reads it: an instruction to treat it as data,
/// and marker lines carrying a random per-guard boundary that is removed from the content, so
/// the content cannot fake the end of the frame.
#[pyclass(module = "agentmaker._native", name = "Guard", frozen)]
pub struct PyGuard {
    core: Guard,
}

#[pymethods]
impl PyGuard {
    /// ``boundary``: fixed token (16-128 ASCII letters/digits) instead of a random one.
    /// ``header``: replacement instruction text; must contain ``{boundary}`` and may use ``{source}``.
    #[new]
    #[pyo3(signature = (boundary = None, header = None))]
    fn new(boundary: Option<&str>, header: Option<&str>) -> PyResult<Self> {
        let core = match boundary {
            Some(b) => Guard::with_boundary(b)?,
            None => Guard::random(),
        };
        let core = match header {
            Some(h) => core.with_header(h)?,
            None => core,
        };
        Ok(PyGuard { core })
    }

    #[getter]
    fn boundary(&self) -> &str {
        self.core.boundary()
    }

    /// The framed text the model reads for ``content`` returned by tool ``source``.
    fn wrap(&self, py: Python<'_>, source: &str, content: &str) -> String {
        if content.len() > 64 * 1024 {
            py.detach(|| self.core.wrap(source, content))
        } else {
            self.core.wrap(source, content)
        }
    }

    /// ``content`` with every copy of the boundary removed.
    fn neutralise(&self, content: &str) -> String {
        self.core.neutralise(content).into_owned()
    }
}
