//! The core's texts, schema and checks of `write_todos` for `TodoTool` (Python keeps the list
//! in the run).

use crate::builtins::todos::{input_schema, parse, render, PROMPTS};
use crate::prompts::Prompts;
use crate::py::convert::{py_to_value, value_to_py};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::HashMap;

/// The model-facing texts of ``write_todos``, with ``prompts=`` overrides checked.
#[pyclass(module = "agentmaker._native", name = "_TodoTexts", frozen)]
pub struct PyTodoTexts {
    prompts: Prompts,
}

#[pymethods]
impl PyTodoTexts {
    #[new]
    #[pyo3(signature = (prompts = None))]
    fn new(prompts: Option<HashMap<String, String>>) -> PyResult<Self> {
        Ok(PyTodoTexts {
            prompts: Prompts::new(PROMPTS, prompts)?,
        })
    }

    /// The tool's description.
    fn description(&self) -> String {
        self.prompts.get("tool.desc.write_todos").to_string()
    }

    /// The root input schema.
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &input_schema(&self.prompts))
    }

    /// The list the model sent, checked: ``(items, text)`` with the items as new dicts
    /// ``{"content", "status"}`` and the text the model reads, or ``(None, error text)``.
    fn write<'py>(
        &self,
        py: Python<'py>,
        todos: &Bound<'py, PyAny>,
    ) -> PyResult<(Option<Bound<'py, PyList>>, String)> {
        let Ok(value) = py_to_value(todos) else {
            return Ok((
                None,
                self.prompts
                    .get("tool.msg.write_todos.not_list")
                    .to_string(),
            ));
        };
        match parse(&self.prompts, &value) {
            Err(text) => Ok((None, text)),
            Ok(items) => {
                let list = PyList::empty(py);
                for t in &items {
                    let d = PyDict::new(py);
                    d.set_item("content", &t.content)?;
                    d.set_item("status", t.status.as_str())?;
                    list.append(d)?;
                }
                Ok((Some(list), render(&self.prompts, &items)))
            }
        }
    }
}
