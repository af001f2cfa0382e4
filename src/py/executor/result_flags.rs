//! What a result's way to the model depends on: whether the tool marks it external, whether it
//! ends the run, and its `max_result_chars` limit (the tool's own, else the run's) with the
//! tool's paging argument.

use super::call::PyPreparedCall;
use super::PyCallPipeline;
use crate::executor::{self, ResultFlags};
use pyo3::intern;
use pyo3::prelude::*;

impl PyCallPipeline {
    /// What the tool says about this result: external content (when unsure: yes, the text is
    /// untrusted) and whether it ends the run.
    pub(super) fn result_flags(&self, py: Python<'_>, call: &PyPreparedCall) -> ResultFlags {
        let tool = call.entry.payload.obj.bind(py);
        let external = tool
            .call_method1(intern!(py, "is_external_content"), (call.params.bind(py),))
            .and_then(|v| v.is_truthy())
            .unwrap_or(true);
        let stop_after = tool
            .getattr(intern!(py, "stop_after_tool_call"))
            .and_then(|v| v.is_truthy())
            .unwrap_or(false);
        // The tool's own limit wins over the run's (as its timeout does).
        let max_chars = tool
            .getattr(intern!(py, "max_result_chars"))
            .ok()
            .filter(|v| !v.is_none())
            .and_then(|v| v.extract::<usize>().ok())
            .or(self.max_result_chars);
        let paging = max_chars.and_then(|_| {
            call.entry.with_schema(|schema| {
                let props = schema.get("properties").and_then(|p| p.as_object())?;
                executor::cut::paging_argument(props.keys().map(String::as_str))
            })
        });
        ResultFlags {
            external,
            stop_after,
            max_chars,
            paging,
        }
    }
}
