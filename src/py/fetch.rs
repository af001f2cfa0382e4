//! `FetchTool` for Python: the core [`FetchTool`] (`fetch_url`) behind the `Tool` base class.

use crate::builtins::fetch::{FetchOptions, FetchTool};
use crate::error::ConfigError;
use crate::net::address::AddressPolicy;
use crate::py::settings::{positive, timeout_seconds};
use crate::py::tool::PyTool;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::Arc;

/// Fetch a web page over http(s) as Markdown-like text (tool name ``fetch_url``; parameters
/// ``url``, ``start``, ``max_chars``).
///
/// Before connecting, and on every redirect hop, the address is checked: loopback, private,
/// link-local (cloud metadata), multicast, unspecified and reserved addresses are refused
/// unless ``allow_private=True``. ``allowed_hosts`` exempts the named hosts (as written in the
/// URL) from the check. No proxy from the environment is used. ``timeout`` bounds the whole
/// fetch in seconds, ``max_bytes`` the download, ``max_chars`` the text returned per call. The
/// result is external content.
#[pyclass(module = "agentmaker", name = "FetchTool", extends = PyTool, frozen)]
pub struct PyFetchTool {}

#[pymethods]
impl PyFetchTool {
    /// Construction happens in ``__new__``; this only stops ``Tool.__init__`` from seeing the
    /// keyword arguments.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __init__(
        &self,
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) {
    }

    #[classattr]
    fn external_content() -> bool {
        true
    }

    #[classattr]
    fn supports_parallel() -> bool {
        true
    }

    #[classattr]
    fn read_only() -> bool {
        true
    }

    #[classattr]
    fn open_world() -> bool {
        true
    }

    #[new]
    #[pyo3(signature = (*, allow_private = false, allowed_hosts = None, timeout = 20.0, max_bytes = 5_000_000, max_chars = 20_000, max_redirects = 5, prompts = None))]
    fn new(
        allow_private: bool,
        allowed_hosts: Option<Vec<String>>,
        timeout: f64,
        max_bytes: i64,
        max_chars: i64,
        max_redirects: i64,
        prompts: Option<HashMap<String, String>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let opts = FetchOptions {
            policy: AddressPolicy {
                allow_private,
                allowed_hosts: allowed_hosts.unwrap_or_default(),
            },
            timeout: timeout_seconds(timeout)?,
            max_bytes: positive("max_bytes", max_bytes)?,
            max_chars: positive("max_chars", max_chars)?,
            max_redirects: usize::try_from(max_redirects).map_err(|_| {
                PyErr::from(ConfigError::Invalid(format!(
                    "max_redirects must be 0 or more, got {max_redirects}"
                )))
            })?,
            prompts,
        };
        let core = FetchTool::new(opts).map_err(|e| PyErr::from(ConfigError::Invalid(e)))?;
        Ok(PyTool::native_subclass(Arc::new(core), PyFetchTool {}))
    }
}
