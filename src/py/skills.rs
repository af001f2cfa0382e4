//! `SkillsTool` for Python: the core [`SkillsTool`] behind the `Tool` base class.

use crate::builtins::skills::{SkillsOptions, SkillsSetupError, SkillsTool};
use crate::error::ConfigError;
use crate::py::settings::positive;
use crate::py::tool::PyTool;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Skills: folders holding a ``SKILL.md`` (YAML front matter with ``name``, ``description`` and
/// optional ``triggers``, then Markdown instructions) under each of ``paths`` (tool name
/// ``skills``; parameters ``action`` (``list``/``load``/``read``), ``name``, ``file``).
///
/// Discovery happens here: a bad path or SKILL.md raises ``ToolConfigError`` listing every
/// problem, one a line, each naming its file and line. ``load`` returns a skill's body (read
/// when asked) and the other files of its folder; ``read`` returns one of them, confined to the
/// folder like ``NotesTool``'s root. ``instructions`` (also ``system_prompt_section()``) is the
/// names and descriptions an ``Agent`` puts in its system prompt.
#[pyclass(module = "agentmaker", name = "SkillsTool", extends = PyTool, frozen)]
pub struct PySkillsTool {
    core: Arc<SkillsTool>,
}

#[pymethods]
impl PySkillsTool {
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
    #[pyo3(signature = (paths, *, max_read_chars = 20_000, max_description_chars = 300, prompts = None))]
    fn new(
        py: Python<'_>,
        paths: &Bound<'_, PyAny>,
        max_read_chars: i64,
        max_description_chars: i64,
        prompts: Option<HashMap<String, String>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        if paths.is_instance_of::<pyo3::types::PyString>()
            || paths.is_instance_of::<pyo3::types::PyBytes>()
        {
            return Err(ConfigError::Invalid(
                "paths must be a list of directories, not one string".to_string(),
            )
            .into());
        }
        let paths: Vec<PathBuf> = paths.extract()?;
        let opts = SkillsOptions {
            max_read_chars: positive("max_read_chars", max_read_chars)?,
            max_description_chars: positive("max_description_chars", max_description_chars)?,
            prompts,
        };
        let core = py
            .detach(|| SkillsTool::new(&paths, opts))
            .map_err(|e| match e {
                SkillsSetupError::Config(msg) | SkillsSetupError::Invalid(msg) => {
                    PyErr::from(ConfigError::Invalid(msg))
                }
            })?;
        let core = Arc::new(core);
        Ok(PyTool::native_subclass(core.clone(), PySkillsTool { core }))
    }

    /// The system-prompt section: each skill's name and cleaned, capped description (empty
    /// when no skill was found).
    fn system_prompt_section(&self) -> String {
        self.core.system_prompt_section()
    }

    /// What an ``Agent`` adds to its system prompt while this tool is offered (``None`` when
    /// no skill was found).
    #[getter]
    fn instructions(&self) -> Option<String> {
        Some(self.core.system_prompt_section()).filter(|s| !s.is_empty())
    }

    /// The skills found: ``name``, ``description``, ``triggers`` and ``path`` (the SKILL.md).
    #[getter]
    fn skills<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for s in self.core.skills() {
            let d = PyDict::new(py);
            d.set_item("name", &s.meta.name)?;
            d.set_item("description", &s.meta.description)?;
            d.set_item("triggers", &s.meta.triggers)?;
            d.set_item("path", s.file())?;
            list.append(d)?;
        }
        Ok(list)
    }
}
