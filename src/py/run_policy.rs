//! RunPolicy validation and per-run accounting for Python.

use crate::run_policy::{LimitExceeded, PolicyError, RunBudget, RunLimits};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

fn repr(value: &Bound<'_, PyAny>) -> String {
    value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable>".to_owned())
}

/// A count as the core's range check takes it; the range itself is checked there only.
fn count(field: &'static str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    // bool is an int subclass in Python, but True is not a count.
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return Err(PolicyError::BadCount {
            field,
            min: RunLimits::min_count(field),
            got: repr(value),
        }
        .into());
    }
    // Beyond i64: a huge positive cap is the same as no practical cap, a huge negative one is
    // refused like any other below the minimum.
    crate::py::convert::saturating_i64(value).map(Some)
}

fn seconds(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let bad = || PyErr::from(PolicyError::BadDeadline { got: repr(value) });
    if value.is_instance_of::<PyBool>()
        || !(value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>())
    {
        return Err(bad());
    }
    let v: f64 = value.extract().map_err(|_| bad())?;
    Ok(Some(v))
}

/// `values`: max_llm_calls, max_tool_calls, max_tokens and deadline_seconds, as given.
fn limits(values: [Option<&Bound<'_, PyAny>>; 4]) -> PyResult<RunLimits> {
    let [max_llm_calls, max_tool_calls, max_tokens, deadline_seconds] = values;
    let given = [
        ("max_llm_calls", max_llm_calls),
        ("max_tool_calls", max_tool_calls),
        ("max_tokens", max_tokens),
    ];
    RunLimits::new(
        count("max_llm_calls", max_llm_calls)?,
        count("max_tool_calls", max_tool_calls)?,
        count("max_tokens", max_tokens)?,
        seconds(deadline_seconds)?,
    )
    .map_err(|mut e| {
        // The message shows the value as the caller wrote it (a huge int was saturated).
        match &mut e {
            PolicyError::BadCount { field, got, .. } => {
                if let Some((_, Some(v))) = given.iter().find(|(f, _)| *f == *field) {
                    *got = repr(v);
                }
            }
            PolicyError::BadDeadline { got } => {
                if let Some(v) = deadline_seconds {
                    *got = repr(v);
                }
            }
        }
        PyErr::from(e)
    })
}

/// Validate RunPolicy limits; raises ValueError naming the field and the bad value. Returns
/// whether any numeric cap is set (the core's rule, which RunPolicy.has_numeric_cap reports).
#[pyfunction]
#[pyo3(signature = (max_llm_calls = None, max_tool_calls = None, max_tokens = None, deadline_seconds = None))]
pub fn check_run_limits(
    max_llm_calls: Option<&Bound<'_, PyAny>>,
    max_tool_calls: Option<&Bound<'_, PyAny>>,
    max_tokens: Option<&Bound<'_, PyAny>>,
    deadline_seconds: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    limits([max_llm_calls, max_tool_calls, max_tokens, deadline_seconds])
        .map(|l| l.has_numeric_cap())
}

fn verdict(r: Result<(), LimitExceeded>) -> Option<(&'static str, String)> {
    r.err().map(|e| (e.kind(), e.to_string()))
}

/// One run's counters against its limits. Each check returns None, or ``(kind, message)`` for
/// the limit that was hit (the caller raises RunLimitExceeded). ``elapsed`` is seconds since
/// the run started.
#[pyclass(module = "agentmaker._native", name = "RunBudget")]
pub struct PyRunBudget {
    core: RunBudget,
}

#[pymethods]
impl PyRunBudget {
    #[new]
    #[pyo3(signature = (max_llm_calls = None, max_tool_calls = None, max_tokens = None, deadline_seconds = None))]
    fn new(
        max_llm_calls: Option<&Bound<'_, PyAny>>,
        max_tool_calls: Option<&Bound<'_, PyAny>>,
        max_tokens: Option<&Bound<'_, PyAny>>,
        deadline_seconds: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let limits = limits([max_llm_calls, max_tool_calls, max_tokens, deadline_seconds])?;
        Ok(PyRunBudget {
            core: RunBudget::new(limits),
        })
    }

    fn admit_llm(&self, elapsed: f64) -> Option<(&'static str, String)> {
        verdict(self.core.admit_llm(elapsed))
    }

    fn record_llm(&mut self, tokens: i64, elapsed: f64) -> Option<(&'static str, String)> {
        verdict(self.core.record_llm(tokens.max(0) as u64, elapsed))
    }

    fn admit_tool(&self, elapsed: f64) -> Option<(&'static str, String)> {
        verdict(self.core.admit_tool(elapsed))
    }

    fn record_tool(&mut self) {
        self.core.record_tool();
    }

    /// Seconds left before the deadline (never negative), or None without one.
    fn time_left(&self, elapsed: f64) -> Option<f64> {
        self.core.time_left(elapsed)
    }

    #[getter]
    fn llm_calls(&self) -> u64 {
        self.core.llm_calls
    }

    #[getter]
    fn tool_calls(&self) -> u64 {
        self.core.tool_calls
    }

    #[getter]
    fn total_tokens(&self) -> u64 {
        self.core.total_tokens
    }

    /// True when any numeric cap is set (tool calls then run one at a time).
    #[getter]
    fn has_numeric_cap(&self) -> bool {
        self.core.limits.has_numeric_cap()
    }
}
