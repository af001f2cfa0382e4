//! `CalculatorTool` for Python: the core [`CalculatorTool`] behind the `Tool` base class.

use crate::builtins::calculator::CalculatorTool;
use crate::py::tool::PyTool;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::Arc;

/// Evaluate arithmetic expressions with Python's semantics, without ``eval`` (tool name
/// ``calculator``, one parameter ``expression``).
///
/// ``+ - * / // % **``, unary signs, parentheses, ``sqrt abs round log sin cos tan exp floor
/// ceil min max`` and the constants ``pi`` and ``e``. Integers are exact (up to 1000 digits), ``/``
/// always gives a float and floats print as Python prints them. Input is bounded (1000
/// characters, 100 levels of nesting, 250 numbers/operators/calls), so every call returns within
/// about a millisecond; bad input is an error response, never an exception.
///
/// ``prompts`` maps ``calculator.*`` message keys to replacement templates; an unknown key raises
/// ``ToolConfigError``.
#[pyclass(module = "agentmaker", name = "CalculatorTool", extends = PyTool, frozen)]
pub struct PyCalculatorTool {}

#[pymethods]
impl PyCalculatorTool {
    /// Construction happens in ``__new__``; this only stops ``Tool.__init__`` from seeing the
    /// keyword arguments.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(
        &self,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) {
    }

    #[new]
    #[pyo3(signature = (*, prompts = None))]
    fn new(prompts: Option<HashMap<String, String>>) -> PyResult<PyClassInitializer<Self>> {
        let core = CalculatorTool::new(prompts)?;
        Ok(PyTool::native_subclass(Arc::new(core), PyCalculatorTool {}))
    }
}
