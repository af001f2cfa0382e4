//! `ToolPermissions` for Python: the core decision with Python-friendly construction.

use crate::permissions::ToolPermissions;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyString};
use std::collections::BTreeSet;

/// Which tools an agent may call, by name and by origin.
///
/// Deny wins: a tool named in ``deny`` or whose origin is in ``deny_origins`` is refused. Then,
/// if an allowlist is enabled (``allow`` or ``allow_origins`` is not None), a tool must match
/// one of them. ``None`` means "no allowlist on this dimension"; an empty collection is an
/// allowlist that admits nothing. Matching is exact. Origins (``"builtin"``,
/// ``"mcp:{namespace}"``) are stamped by the framework, so unlike names they cannot be spoofed
/// by a remote server.
///
/// The agent enforces permissions before confirmation and hides denied tools from the model.
#[pyclass(module = "agentmaker", name = "ToolPermissions", frozen, eq)]
#[derive(PartialEq)]
pub struct PyToolPermissions {
    pub core: ToolPermissions,
}

fn names(field: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if value.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "ToolPermissions.{field} must be a collection of strings, not a single str; write {{{}}}",
            value.repr()?
        )));
    }
    let iter = value.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "ToolPermissions.{field} must be a collection of strings or None, got {}",
            value
                .get_type()
                .qualname()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut out = Vec::new();
    for item in iter {
        let item = item?;
        let s: String = item.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "ToolPermissions.{field} must contain only strings, got {}",
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        out.push(s);
    }
    Ok(Some(out))
}

fn frozen<'py>(py: Python<'py>, set: &BTreeSet<String>) -> PyResult<Bound<'py, PyFrozenSet>> {
    PyFrozenSet::new(py, set.iter())
}

impl PyToolPermissions {
    /// The name and origin of a tool object, or a bare name (origin unknown).
    fn subject(tool: &Bound<'_, PyAny>) -> PyResult<(String, Option<String>)> {
        if let Ok(s) = tool.cast::<PyString>() {
            return Ok((s.to_str()?.to_owned(), None));
        }
        let name: String = tool.getattr("name")?.extract()?;
        let origin = match tool.getattr_opt("origin")? {
            Some(o) if !o.is_none() => Some(o.extract::<String>()?),
            _ => None,
        };
        Ok((name, origin))
    }
}

#[pymethods]
impl PyToolPermissions {
    #[new]
    #[pyo3(signature = (allow = None, deny = None, allow_origins = None, deny_origins = None))]
    fn new(
        allow: Option<&Bound<'_, PyAny>>,
        deny: Option<&Bound<'_, PyAny>>,
        allow_origins: Option<&Bound<'_, PyAny>>,
        deny_origins: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let core = ToolPermissions::new(
            names("allow", allow)?,
            names("deny", deny)?.unwrap_or_default(),
            names("allow_origins", allow_origins)?,
            names("deny_origins", deny_origins)?.unwrap_or_default(),
        );
        Ok(PyToolPermissions { core })
    }

    /// Allowed names (a frozenset), or None when no name allowlist is set.
    #[getter]
    fn allow<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyFrozenSet>>> {
        self.core.allow().map(|s| frozen(py, s)).transpose()
    }

    #[getter]
    fn deny<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        frozen(py, self.core.deny())
    }

    #[getter]
    fn allow_origins<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyFrozenSet>>> {
        self.core.allow_origins().map(|s| frozen(py, s)).transpose()
    }

    #[getter]
    fn deny_origins<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        frozen(py, self.core.deny_origins())
    }

    /// Why ``tool`` (a Tool, or a bare name) is refused, or None when it is allowed. For a bare
    /// name the origin is unknown, so origin allowlists cannot admit it.
    fn denial_reason(&self, tool: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let (name, origin) = Self::subject(tool)?;
        Ok(self
            .core
            .check(&name, origin.as_deref())
            .err()
            .map(|d| d.to_string()))
    }

    /// True when ``tool`` (a Tool, or a bare name) may be called.
    fn is_allowed(&self, tool: &Bound<'_, PyAny>) -> PyResult<bool> {
        let (name, origin) = Self::subject(tool)?;
        Ok(self.core.is_allowed(&name, origin.as_deref()))
    }

    fn __repr__(&self) -> String {
        fn set(s: &BTreeSet<String>) -> String {
            if s.is_empty() {
                "set()".to_owned()
            } else {
                let items: Vec<String> = s.iter().map(|x| format!("{x:?}")).collect();
                format!("{{{}}}", items.join(", "))
            }
        }
        fn opt(s: Option<&BTreeSet<String>>) -> String {
            s.map(set).unwrap_or_else(|| "None".to_owned())
        }
        format!(
            "ToolPermissions(allow={}, deny={}, allow_origins={}, deny_origins={})",
            opt(self.core.allow()),
            set(self.core.deny()),
            opt(self.core.allow_origins()),
            set(self.core.deny_origins())
        )
    }
}
