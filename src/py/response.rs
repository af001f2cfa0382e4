//! `ToolResponse` for Python.

use crate::py::convert::value_to_py;
use crate::response::{ToolResponse, ToolStatus};
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{PyTraverseError, PyVisit};

/// The result of a tool call.
///
/// ``text`` is what the model reads; ``status`` is ``"success"``, ``"partial"`` (succeeded but
/// incomplete, e.g. truncated) or ``"error"``; ``data`` is optional structured data for programs
/// (the model never sees it).
#[pyclass(module = "agentmaker", name = "ToolResponse")]
pub struct PyToolResponse {
    #[pyo3(get)]
    pub text: String,
    pub status: ToolStatus,
    #[pyo3(get, set)]
    pub data: Py<PyAny>,
}

fn parse_status(status: &str) -> PyResult<ToolStatus> {
    ToolStatus::parse(status).ok_or_else(|| {
        PyValueError::new_err(format!(
            "status must be 'success', 'partial' or 'error', got {status:?}"
        ))
    })
}

fn text_arg(text: &Bound<'_, PyAny>) -> PyResult<String> {
    text.extract::<String>().map_err(|_| {
        PyTypeError::new_err(format!(
            "ToolResponse text must be a str, got {}",
            text.get_type()
                .qualname()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

impl PyToolResponse {
    pub fn new_py(
        py: Python<'_>,
        text: String,
        status: ToolStatus,
        data: Option<Py<PyAny>>,
    ) -> Self {
        PyToolResponse {
            text,
            status,
            data: data.unwrap_or_else(|| py.None()),
        }
    }

    pub fn from_core(py: Python<'_>, resp: ToolResponse) -> PyResult<Self> {
        let data = match &resp.data {
            Some(v) => value_to_py(py, v)?.unbind(),
            None => py.None(),
        };
        Ok(PyToolResponse {
            text: resp.text,
            status: resp.status,
            data,
        })
    }

    pub fn error_text(py: Python<'_>, text: String) -> Self {
        Self::new_py(py, text, ToolStatus::Error, None)
    }
}

#[pymethods]
impl PyToolResponse {
    #[new]
    #[pyo3(signature = (text, status = "success", data = None))]
    fn new(
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        status: &str,
        data: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        Ok(Self::new_py(
            py,
            text_arg(text)?,
            parse_status(status)?,
            data,
        ))
    }

    /// A successful result.
    #[staticmethod]
    #[pyo3(signature = (text, data = None))]
    fn ok(py: Python<'_>, text: &Bound<'_, PyAny>, data: Option<Py<PyAny>>) -> PyResult<Self> {
        Ok(Self::new_py(py, text_arg(text)?, ToolStatus::Success, data))
    }

    /// A result that succeeded but is incomplete (for example truncated output).
    #[staticmethod]
    #[pyo3(signature = (text, data = None))]
    fn partial(py: Python<'_>, text: &Bound<'_, PyAny>, data: Option<Py<PyAny>>) -> PyResult<Self> {
        Ok(Self::new_py(py, text_arg(text)?, ToolStatus::Partial, data))
    }

    /// A failure the model can act on: the text says what went wrong.
    #[staticmethod]
    #[pyo3(signature = (text, data = None))]
    fn error(py: Python<'_>, text: &Bound<'_, PyAny>, data: Option<Py<PyAny>>) -> PyResult<Self> {
        Ok(Self::new_py(py, text_arg(text)?, ToolStatus::Error, data))
    }

    #[setter]
    fn set_text(&mut self, text: &Bound<'_, PyAny>) -> PyResult<()> {
        self.text = text_arg(text)?;
        Ok(())
    }

    #[getter]
    fn status(&self) -> &'static str {
        self.status.as_str()
    }

    #[setter]
    fn set_status(&mut self, status: &str) -> PyResult<()> {
        self.status = parse_status(status)?;
        Ok(())
    }

    /// True when ``status == "error"``.
    #[getter]
    fn is_error(&self) -> bool {
        self.status == ToolStatus::Error
    }

    /// ``{"text": ..., "status": ..., "data": ...}``.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("text", &self.text)?;
        d.set_item("status", self.status.as_str())?;
        d.set_item("data", self.data.bind(py))?;
        Ok(d)
    }

    /// Pickling and `copy` rebuild the response through the constructor (a value type, like
    /// the reference's dataclass); `data` must itself be picklable.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, pyo3::types::PyType>,
        (String, &'static str, Py<PyAny>),
    ) {
        let this = slf.borrow();
        (
            slf.get_type(),
            (
                this.text.clone(),
                this.status.as_str(),
                this.data.clone_ref(slf.py()),
            ),
        )
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let text = pyo3::types::PyString::new(py, &self.text).repr()?;
        let data = self.data.bind(py).repr()?;
        Ok(format!(
            "ToolResponse(text={text}, status='{}', data={data})",
            self.status.as_str()
        ))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<PyToolResponse>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.borrow();
        let same = self.text == other.text
            && self.status == other.status
            && self.data.bind(py).eq(other.data.bind(py))?;
        match op {
            CompareOp::Eq => Ok(pyo3::types::PyBool::new(py, same)
                .to_owned()
                .into_any()
                .unbind()),
            CompareOp::Ne => Ok(pyo3::types::PyBool::new(py, !same)
                .to_owned()
                .into_any()
                .unbind()),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.data)
    }

    fn __clear__(&mut self) {
        Python::attach(|py| self.data = py.None());
    }
}
