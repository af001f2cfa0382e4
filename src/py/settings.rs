//! Checks of the numbers a built-in tool's Python constructor takes (limits, timeouts).
//!
//! A bad value raises `InvalidToolConfigError` (a `ToolConfigError`, so a `ValueError`) with a
//! text naming the keyword and the value given.

use crate::error::ConfigError;
use pyo3::prelude::*;
use std::time::Duration;

/// A limit that must be a positive integer (`{name} must be a positive integer, got {value}`),
/// as the integer type the option holds.
pub(crate) fn positive<T: TryFrom<i64>>(name: &str, value: i64) -> PyResult<T> {
    match T::try_from(value) {
        Ok(v) if value > 0 => Ok(v),
        _ => Err(invalid(format!(
            "{name} must be a positive integer, got {value}"
        ))),
    }
}

/// A timeout in seconds: finite, positive and at most an hour.
pub(crate) fn timeout_seconds(timeout: f64) -> PyResult<Duration> {
    if timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0 {
        Ok(Duration::from_secs_f64(timeout))
    } else {
        Err(invalid(format!(
            "timeout must be a positive number of seconds (at most 3600), got {timeout}"
        )))
    }
}

fn invalid(message: String) -> PyErr {
    PyErr::from(ConfigError::Invalid(message))
}
