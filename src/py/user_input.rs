//! The core's texts and schema of `ask_user` for `UserInputTool` (Python holds the callback).

use crate::builtins::user_input::{answer_text, input_schema, PROMPTS};
use crate::prompts::Prompts;
use crate::py::convert::value_to_py;
use pyo3::prelude::*;
use std::collections::HashMap;

/// The model-facing texts of ``ask_user``, with ``prompts=`` overrides checked.
#[pyclass(module = "agentmaker._native", name = "_UserInputTexts", frozen)]
pub struct PyUserInputTexts {
    prompts: Prompts,
}

#[pymethods]
impl PyUserInputTexts {
    #[new]
    #[pyo3(signature = (prompts = None))]
    fn new(prompts: Option<HashMap<String, String>>) -> PyResult<Self> {
        let prompts = Prompts::new(PROMPTS, prompts)?;
        Ok(PyUserInputTexts { prompts })
    }

    /// The tool's description.
    fn description(&self) -> String {
        self.prompts.get("tool.desc.ask_user").to_string()
    }

    /// The root input schema.
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &input_schema(&self.prompts))
    }

    /// What the model reads for the person's ``answer``.
    fn answer(&self, answer: &str) -> String {
        answer_text(&self.prompts, answer)
    }

    /// A bad answer of the callback (``kind`` names its type).
    fn bad_answer(&self, kind: &str) -> String {
        self.prompts
            .fmt("tool.msg.ask_user.bad_answer", &[("kind", kind)])
    }

    /// A question the person did not answer (an MCP client declined it), and why.
    fn unanswered(&self, reason: &str) -> String {
        self.prompts
            .fmt("tool.msg.ask_user.unanswered", &[("reason", reason)])
    }

    /// A pausing ``ask_user`` called outside an agent run.
    fn no_run(&self) -> String {
        self.prompts.get("tool.msg.ask_user.no_run").to_string()
    }
}
