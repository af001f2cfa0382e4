//! The worker side of tool isolation (`agentmaker.isolation`): entering a worker, its CPU limit
//! per call, and the texts the model reads when an isolated call ends badly.

use crate::executor::messages;
use crate::isolation::{enter_worker, limit_cpu};
use crate::py::response::PyToolResponse;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

static IN_WORKER: AtomicBool = AtomicBool::new(false);

/// True in an isolation worker: there a tool runs in place (it is already isolated).
pub fn in_worker() -> bool {
    IN_WORKER.load(Ordering::Relaxed)
}

/// In a worker, a tool that runs out of memory or file descriptors has crossed the worker's
/// limit: that is the worker's outcome to report (and the worker is replaced), not an
/// exception of the tool's to show the model.
pub fn is_worker_limit(exc: &Bound<'_, PyAny>) -> bool {
    if !in_worker() {
        return false;
    }
    if exc.is_instance_of::<pyo3::exceptions::PyMemoryError>() {
        return true;
    }
    exc.is_instance_of::<PyOSError>()
        && exc
            .getattr("errno")
            .and_then(|e| e.extract::<i32>())
            .is_ok_and(|e| e == nix::errno::Errno::EMFILE as i32)
}

/// Makes this process an isolation worker (its own process group, its limits).
#[pyfunction]
#[pyo3(signature = (memory_mb = None, open_files = None))]
pub fn _enter_worker(memory_mb: Option<u64>, open_files: Option<u64>) -> PyResult<()> {
    IN_WORKER.store(true, Ordering::Relaxed);
    Ok(enter_worker(memory_mb, open_files)?)
}

/// Gives the next call `seconds` of CPU time.
#[pyfunction]
pub fn _limit_cpu(seconds: f64) -> PyResult<()> {
    Ok(limit_cpu(seconds)?)
}

fn number(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    value.extract::<f64>()
}

/// The error result of an isolated call that did not give one: `kind` is `timeout` (value:
/// seconds), `memory` (MiB), `cpu` (seconds), `files` (descriptors), `crash` (how the worker
/// ended), `setup` (why the tool could not be sent to a worker) or `unguarded` (where the main
/// script calls it from unguarded top-level code).
#[pyfunction]
pub fn _isolation_text(
    py: Python<'_>,
    name: &str,
    kind: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    let g = messages::general_number;
    let text = match kind {
        "timeout" => messages::stopped_after(name, number(value)?),
        "memory" => messages::over_limit(name, &format!("memory limit ({} MB)", g(number(value)?))),
        "cpu" => messages::over_limit(name, &format!("CPU time limit ({} s)", g(number(value)?))),
        "files" => messages::over_limit(name, &format!("open-files limit ({})", g(number(value)?))),
        "crash" => messages::worker_died(name, &value.str()?.to_string_lossy()),
        "setup" => messages::cannot_isolate(name, &value.str()?.to_string_lossy()),
        "unguarded" => messages::cannot_isolate(
            name,
            &messages::unguarded_script(&value.str()?.to_string_lossy()),
        ),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown isolation outcome {other:?}"
            )))
        }
    };
    Py::new(py, PyToolResponse::error_text(py, text))
}
