//! The approval rules and the refusal limit a run's pipeline applies before anyone is asked
//! (the decisions and texts are the core's, [`crate::executor::approval`]).

use super::record::{prepared_call, status_word};
use super::PyCallPipeline;
use crate::executor::approval;
use crate::executor::CallStatus;
use pyo3::intern;
use pyo3::prelude::*;

impl PyCallPipeline {
    pub(super) fn decide_by_rules(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
    ) -> PyResult<Option<bool>> {
        let name: String = record.getattr(intern!(py, "name"))?.extract()?;
        let text = match self.approval.rule_for(&name) {
            Some((true, _)) => return Ok(Some(true)),
            Some((false, pattern)) => approval::refused_by_rule(&name, pattern),
            None => match self.approval.max_attempts {
                Some(max) if self.refusals.used_up(&name, max) => {
                    approval::attempts_used(&name, max)
                }
                _ => return Ok(None),
            },
        };
        if let Ok(call) = prepared_call(record) {
            if !call.get().finish() {
                return Ok(Some(false));
            }
        }
        record.setattr(
            intern!(py, "status"),
            status_word(py, CallStatus::NotConfirmed),
        )?;
        record.setattr(intern!(py, "output"), text)?;
        Ok(Some(false))
    }
}
