//! `ToolParameter` for Python.

use crate::py::convert::py_to_value;
use crate::py::errors::tool_registration_error;
use crate::schema::ToolParameter;
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{PyTraverseError, PyVisit};

/// One parameter of a tool.
///
/// ``type`` is a JSON Schema type word (``string``, ``integer``, ``number``, ``boolean``,
/// ``array``, ``object``). ``default`` only matters when ``required`` is false. ``schema``, when
/// given, is the full property schema and is used verbatim (``enum``, ``items``, nested objects).
#[pyclass(module = "agentmaker", name = "ToolParameter")]
pub struct PyToolParameter {
    #[pyo3(get, set)]
    pub name: String,
    #[pyo3(get, set, name = "type")]
    pub type_: String,
    #[pyo3(get, set)]
    pub description: String,
    #[pyo3(get, set)]
    pub required: bool,
    #[pyo3(get, set)]
    pub default: Py<PyAny>,
    #[pyo3(get)]
    pub schema: Py<PyAny>,
}

fn check_schema(schema: &Bound<'_, PyAny>) -> PyResult<()> {
    if schema.is_none() || schema.is_instance_of::<PyDict>() {
        Ok(())
    } else {
        Err(PyTypeError::new_err(
            "ToolParameter schema must be a dict (a JSON Schema) or None",
        ))
    }
}

impl PyToolParameter {
    /// The core parameter; `tool` names the owner in error messages.
    pub fn to_core(&self, py: Python<'_>, tool: &str) -> PyResult<ToolParameter> {
        let default = self.default.bind(py);
        let default = if default.is_none() {
            None
        } else {
            Some(py_to_value(default).map_err(|e| {
                tool_registration_error(
                    py,
                    format!("tool '{tool}' parameter '{}' has a default that is not JSON ({}); use a JSON value or leave it None", self.name, e.describe()),
                )
            })?)
        };
        let schema = self.schema.bind(py);
        let schema = if schema.is_none() {
            None
        } else {
            Some(py_to_value(schema).map_err(|e| {
                tool_registration_error(
                    py,
                    format!(
                        "tool '{tool}' parameter '{}' has a schema that is not JSON ({})",
                        self.name,
                        e.describe()
                    ),
                )
            })?)
        };
        Ok(ToolParameter {
            name: self.name.clone(),
            type_: self.type_.clone(),
            description: self.description.clone(),
            required: self.required,
            default: default.map(Box::new),
            schema: schema.map(Box::new),
        })
    }
}

#[pymethods]
impl PyToolParameter {
    #[new]
    #[pyo3(signature = (name, r#type, description = String::new(), required = true, default = None, schema = None))]
    fn new(
        py: Python<'_>,
        name: String,
        r#type: String,
        description: String,
        required: bool,
        default: Option<Py<PyAny>>,
        schema: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let schema = schema.unwrap_or_else(|| py.None());
        check_schema(schema.bind(py))?;
        Ok(PyToolParameter {
            name,
            type_: r#type,
            description,
            required,
            default: default.unwrap_or_else(|| py.None()),
            schema,
        })
    }

    #[setter]
    fn set_schema(&mut self, schema: Py<PyAny>) -> PyResult<()> {
        Python::attach(|py| check_schema(schema.bind(py)))?;
        self.schema = schema;
        Ok(())
    }

    /// Pickling and `copy` rebuild the parameter through the constructor (a value type).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, pyo3::types::PyType>,
        (String, String, String, bool, Py<PyAny>, Py<PyAny>),
    ) {
        let py = slf.py();
        let this = slf.borrow();
        let args = (
            this.name.clone(),
            this.type_.clone(),
            this.description.clone(),
            this.required,
            this.default.clone_ref(py),
            this.schema.clone_ref(py),
        );
        (slf.get_type(), args)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolParameter(name={}, type={}, description={}, required={}, default={}, schema={})",
            pyo3::types::PyString::new(py, &self.name).repr()?,
            pyo3::types::PyString::new(py, &self.type_).repr()?,
            pyo3::types::PyString::new(py, &self.description).repr()?,
            if self.required { "True" } else { "False" },
            self.default.bind(py).repr()?,
            self.schema.bind(py).repr()?,
        ))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<PyToolParameter>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.borrow();
        let same = self.name == other.name
            && self.type_ == other.type_
            && self.description == other.description
            && self.required == other.required
            && self.default.bind(py).eq(other.default.bind(py))?
            && self.schema.bind(py).eq(other.schema.bind(py))?;
        let result = match op {
            CompareOp::Eq => same,
            CompareOp::Ne => !same,
            _ => return Ok(py.NotImplemented()),
        };
        Ok(pyo3::types::PyBool::new(py, result)
            .to_owned()
            .into_any()
            .unbind())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.default)?;
        visit.call(&self.schema)
    }

    fn __clear__(&mut self) {
        Python::attach(|py| {
            self.default = py.None();
            self.schema = py.None();
        });
    }
}
