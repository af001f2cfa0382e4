//! `ToolParameter` for Python.

use crate::py::convert::py_to_value;
use crate::py::errors::{definition, tool_config};
use crate::schema::ToolParameter;
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use pyo3::{PyTraverseError, PyVisit};

/// One parameter of a tool.
///
/// ``type`` is a JSON Schema type word: ``string``, ``integer``, ``number``, ``boolean``,
/// ``array``, ``object`` or ``null``, or ``any`` for any JSON value (its schema then has no
/// ``type`` key). It is checked when the parameter is built (and when ``type`` is set), so a
/// typo fails at that line with :class:`ToolConfigError` naming the parameter, the bad word and
/// the allowed ones, not later at registration.
///
/// Common spellings are accepted and stored as the JSON Schema word: any capitalisation
/// (``"String"`` -> ``"string"``), Python's names ``str``, ``int``, ``float``, ``bool``,
/// ``list``, ``tuple``, ``dict`` (also as the type objects ``str``, ``int``...), and ``long``
/// (integer) and ``double`` (number) from Java/C catalogs. Refused with a pointer to the right
/// form: ``enum`` (give the values' type and put the values in ``schema``, e.g.
/// ``ToolParameter("unit", "string", schema={"type": "string", "enum": ["C", "F"]})``),
/// ``date``/``datetime``/``time`` (a ``string``, with a ``format`` in ``schema``), ``bytes``/
/// ``file`` (a ``string``, e.g. base64 or a path) and every other word.
///
/// ``default`` only matters when ``required`` is false. ``schema``, when given, is the full
/// property schema and is used verbatim (``enum``, ``items``, nested objects).
#[pyclass(module = "agentmaker", name = "ToolParameter")]
pub struct PyToolParameter {
    #[pyo3(get, set)]
    pub name: String,
    #[pyo3(get, name = "type")]
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

/// The JSON Schema type words a parameter may declare (``any``: no ``type`` constraint).
pub const TYPE_WORDS: [&str; 8] = [
    "string", "integer", "number", "boolean", "array", "object", "null", "any",
];

/// Other spellings stored as their JSON Schema word (matched after lowercasing).
const TYPE_ALIASES: [(&str, &str); 9] = [
    ("str", "string"),
    ("int", "integer"),
    ("long", "integer"),
    ("float", "number"),
    ("double", "number"),
    ("bool", "boolean"),
    ("list", "array"),
    ("tuple", "array"),
    ("dict", "object"),
];

/// The JSON Schema word for `raw`, or the message saying what to write instead.
pub fn normalise_type(name: &str, raw: &str) -> Result<String, String> {
    let word = raw.trim().to_lowercase();
    if let Some(&w) = TYPE_WORDS.iter().find(|&&w| w == word) {
        return Ok(w.to_string());
    }
    if let Some(&(_, w)) = TYPE_ALIASES.iter().find(|(a, _)| *a == word) {
        return Ok(w.to_string());
    }
    let hint = match word.as_str() {
        "enum" => " give the values' type instead and list them in schema, e.g. ToolParameter(name, \"string\", schema={\"type\": \"string\", \"enum\": [...]});".to_string(),
        "date" | "datetime" | "date-time" | "time" => format!(" a {word} travels as a string: use type \"string\" (and schema={{\"type\": \"string\", \"format\": \"{}\"}} to say which format);", if word == "datetime" { "date-time" } else { &word }),
        "bytes" | "file" | "binary" => format!(" {word} travels as a string (base64 or a path): use type \"string\";"),
        "float64" | "float32" | "decimal" => " use type \"number\";".to_string(),
        "int64" | "int32" | "short" | "byte" => " use type \"integer\";".to_string(),
        "map" | "hashmap" | "record" => " use type \"object\";".to_string(),
        "char" | "text" => " use type \"string\";".to_string(),
        "none" | "nonetype" => " use type \"null\" (or \"any\");".to_string(),
        "" => " the type is empty;".to_string(),
        _ => String::new(),
    };
    let aliases: Vec<&str> = TYPE_ALIASES.iter().map(|(a, _)| *a).collect();
    Err(format!(
        "ToolParameter '{name}' has type {raw:?}, which is not a JSON Schema type;{hint} allowed types: {} (also accepted, in any capitalisation: {})",
        TYPE_WORDS.join(", "),
        aliases.join(", ")
    ))
}

/// `type` as given to the constructor or the setter: a word or a Python type object (`str`...).
fn type_word(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let raw: String = if let Ok(t) = value.cast::<PyType>() {
        t.name()?.extract()?
    } else if let Ok(s) = value.extract::<String>() {
        s
    } else {
        return Err(tool_config(format!(
                "ToolParameter '{name}' type must be a string such as \"string\" or \"integer\", got {}",
                value.repr()?
            ),
        ));
    };
    normalise_type(name, &raw).map_err(tool_config)
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
                definition(format!("tool '{tool}' parameter '{}' has a default that is not JSON ({}); use a JSON value or leave it None", self.name, e.describe()),
                )
            })?)
        };
        let schema = self.schema.bind(py);
        let schema = if schema.is_none() {
            None
        } else {
            Some(py_to_value(schema).map_err(|e| {
                definition(format!(
                    "tool '{tool}' parameter '{}' has a schema that is not JSON ({})",
                    self.name,
                    e.describe()
                ))
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
        r#type: &Bound<'_, PyAny>,
        description: String,
        required: bool,
        default: Option<Py<PyAny>>,
        schema: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let type_ = type_word(&name, r#type)?;
        let schema = schema.unwrap_or_else(|| py.None());
        check_schema(schema.bind(py))?;
        Ok(PyToolParameter {
            name,
            type_,
            description,
            required,
            default: default.unwrap_or_else(|| py.None()),
            schema,
        })
    }

    #[setter]
    fn set_type(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.type_ = type_word(&self.name, value)?;
        Ok(())
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
