//! Finding what a call names (a real name, then a wire name) and the renderings cached for the
//! current registry version, which hold the wire-name map.

use super::render::Rendered;
use super::{PyEntry, PyToolRegistry};
use crate::wire::WireNames;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::sync::{Arc, PoisonError};

impl PyToolRegistry {
    /// The entry a model's call names: the real name first, then a wire name (looked up only
    /// when no tool has that real name, so a call on a real name costs what it did).
    pub(crate) fn entry_for_call(&self, py: Python<'_>, name: &str) -> Option<Arc<PyEntry>> {
        self.entry(py, name).or_else(|| {
            let rendered = self.rendered(py);
            let real = rendered.wire.real(name)?;
            self.entry(py, real)
        })
    }

    /// Registered names, in order, of the tools `keep` accepts (given the entry and the
    /// tool's origin).
    pub(crate) fn names_where(
        &self,
        py: Python<'_>,
        keep: &dyn Fn(&PyEntry, Option<&str>) -> bool,
    ) -> Vec<String> {
        let entries: Vec<Arc<PyEntry>> = self.read(py).entries().cloned().collect();
        entries
            .iter()
            .filter(|e| {
                let tool = e
                    .payload
                    .obj
                    .bind(py)
                    .cast::<crate::py::tool::PyTool>()
                    .ok()
                    .cloned();
                let origin = tool.map(|t| t.borrow().origin.clone());
                keep(e, origin.as_deref())
            })
            .map(|e| e.name().to_string())
            .collect()
    }

    /// The texts cached for the current registry version (built with no lock held). The cache
    /// holds no tool: an unregistered tool is released at once.
    pub(super) fn rendered(&self, py: Python<'_>) -> Arc<Rendered> {
        let current = self.read(py).version();
        let cached = self
            .rendered
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(r) = cached.filter(|r| r.version == current) {
            return r;
        }
        let fresh = {
            let reg = self.read(py);
            Arc::new(Rendered::new(reg.version(), WireNames::new(reg.names())))
        };
        let stale = {
            let mut cache = self
                .rendered
                .lock_py_attached(py)
                .unwrap_or_else(PoisonError::into_inner);
            if cache.as_ref().is_some_and(|c| c.version > fresh.version) {
                None
            } else {
                cache.replace(Arc::clone(&fresh))
            }
        };
        drop(stale);
        fresh
    }
}
