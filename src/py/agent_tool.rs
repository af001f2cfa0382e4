//! The core's texts and schema of an agent offered as a tool (``Agent.as_tool``; Python runs
//! the sub-agent).

use crate::builtins::agent_tool::{
    description, failed, input_schema, paused, too_deep, DEFAULT_MAX_DEPTH, PROMPTS,
};
use crate::prompts::Prompts;
use crate::py::convert::value_to_py;
use pyo3::prelude::*;
use std::collections::HashMap;

/// The model-facing texts of an agent tool, with ``prompts=`` overrides checked.
#[pyclass(module = "agentmaker._native", name = "_AgentToolTexts", frozen)]
pub struct PyAgentToolTexts {
    prompts: Prompts,
}

#[pymethods]
impl PyAgentToolTexts {
    #[new]
    #[pyo3(signature = (prompts = None))]
    fn new(prompts: Option<HashMap<String, String>>) -> PyResult<Self> {
        Ok(PyAgentToolTexts {
            prompts: Prompts::new(PROMPTS, prompts)?,
        })
    }

    /// The default nesting limit.
    #[classattr]
    fn default_max_depth() -> u32 {
        DEFAULT_MAX_DEPTH
    }

    /// The default description of the agent ``name`` as a tool.
    fn description(&self, name: &str) -> String {
        description(&self.prompts, name)
    }

    /// The root input schema.
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        value_to_py(py, &input_schema(&self.prompts))
    }

    /// The refusal of a call nested past ``max`` (``depth`` agents deep already).
    fn too_deep(&self, name: &str, depth: u32, max: u32) -> String {
        too_deep(&self.prompts, name, depth, max)
    }

    /// A sub-agent run that ended with an error of its own.
    fn failed(&self, name: &str, error: &str) -> String {
        failed(&self.prompts, name, error)
    }

    /// A sub-agent run started outside an agent run that paused on ``count`` calls.
    fn paused(&self, name: &str, count: usize) -> String {
        paused(&self.prompts, name, count)
    }
}
