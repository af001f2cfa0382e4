//! Guardrails in the pipeline: a result held for the output guardrails, then released through
//! the cut and the frame; a guardrail's refusal, failure or trip written into the record.
//! The texts are the core's ([`crate::executor::guardrails`]).

use super::record::{prepared_call, status_word, with_repair_note};
use super::PyCallPipeline;
use crate::executor::guardrails::{self, Stage, Verdict};
use crate::executor::{self, CallStatus, Finished, Outcome};
use crate::guard::Guard;
use crate::py::executor::call::PyPreparedCall;
use crate::response::ToolStatus;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;

impl PyCallPipeline {
    /// Whether a returned result waits for output guardrails (the run's, or the tool's own)
    /// before it is cut and framed.
    pub(super) fn holds(&self, py: Python<'_>, call: &PyPreparedCall) -> bool {
        self.hold_results
            || call
                .entry
                .payload
                .obj
                .bind(py)
                .getattr(intern!(py, "output_guardrails"))
                .and_then(|g| g.is_truthy())
                .unwrap_or(false)
    }

    /// Keeps a returned result as the tool gave it, for the output guardrails.
    pub(super) fn hold(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        (text, status): (String, ToolStatus),
        data: Option<Bound<'_, PyAny>>,
        elapsed: f64,
    ) -> PyResult<()> {
        record.setattr(intern!(py, "status"), status_word(py, status.into()))?;
        record.setattr(intern!(py, "output"), text)?;
        record.setattr(intern!(py, "duration"), elapsed)?;
        record.setattr(intern!(py, "executed"), true)?;
        if let Some(data) = data {
            record.setattr(intern!(py, "data"), data)?;
        }
        record.setattr(intern!(py, "_held"), true)
    }

    /// Releases a held result (replaced by `replacement` when an output guardrail redacted it):
    /// the `max_result_chars` cut, the external-content frame and the run's stop apply now.
    pub(super) fn release_held(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        replacement: Option<String>,
    ) -> PyResult<()> {
        if !record.getattr(intern!(py, "_held"))?.is_truthy()? {
            return Ok(());
        }
        record.setattr(intern!(py, "_held"), false)?;
        let call = prepared_call(record)?;
        let call = call.get();
        let status: String = record.getattr(intern!(py, "status"))?.extract()?;
        let status = match status.as_str() {
            "partial" => ToolStatus::Partial,
            "error" => ToolStatus::Error,
            _ => ToolStatus::Success,
        };
        let text = match replacement {
            Some(text) => text,
            None => record.getattr(intern!(py, "output"))?.extract()?,
        };
        let flags = self.result_flags(py, call);
        let Finished { status, text, stop } = executor::finish(
            call.entry.name(),
            Outcome::Returned { text, status },
            flags,
            || self.guard.get_or_init(Guard::random),
        );
        let text = with_repair_note(record, text, status);
        record.setattr(intern!(py, "status"), status_word(py, status))?;
        record.setattr(intern!(py, "output"), text)?;
        if let Some(stop) = stop {
            record.setattr(intern!(py, "_stop"), stop)?;
        }
        Ok(())
    }

    /// A guardrail's refusal, failure or trip becomes the call's outcome.
    pub(super) fn guardrail_outcome(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        stage: &str,
        verdict: &str,
        detail: &str,
    ) -> PyResult<()> {
        let (Some(stage), Some(verdict)) = (Stage::parse(stage), Verdict::parse(verdict)) else {
            return Err(PyValueError::new_err(format!(
                "unknown guardrail outcome {stage:?}/{verdict:?}"
            )));
        };
        if stage == Stage::Input {
            // The call never runs: mark it done so nothing else writes its record.
            if !prepared_call(record)?.get().finish() {
                return Ok(());
            }
        } else {
            record.setattr(intern!(py, "_held"), false)?;
        }
        let name: String = record.getattr(intern!(py, "name"))?.extract()?;
        record.setattr(
            intern!(py, "status"),
            status_word(py, CallStatus::Guardrail),
        )?;
        record.setattr(
            intern!(py, "output"),
            guardrails::text(&name, stage, verdict, detail),
        )
    }
}
