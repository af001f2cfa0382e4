//! The core's loopback check for Python (the model client reaches a loopback server directly).

use pyo3::prelude::*;

/// Whether `url` is an absolute URL naming this machine (see [`crate::net::is_loopback`]);
/// False for anything that does not parse.
#[pyfunction]
pub fn _is_loopback_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| crate::net::is_loopback(&u))
}
