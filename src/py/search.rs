//! `SearchTool` for Python: the core [`SearchTool`] behind the `Tool` base class.

use crate::builtins::search::{Endpoints, SearchOptions, SearchTool};
use crate::py::settings::{positive, timeout_seconds};
use crate::py::tool::PyTool;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::Arc;

/// Web search with fallback across providers (tool name ``search``, one parameter ``query``).
///
/// Tries Tavily, DuckDuckGo, Brave and SerpAPI in that order. A provider whose key is not in the
/// environment (``TAVILY_API_KEY``, ``BRAVE_API_KEY``, ``SERPAPI_API_KEY``; read at each call)
/// is skipped, and a provider that fails, times out (``timeout`` seconds per request) or finds
/// nothing hands over to the next. The result lists at most ``max_results`` hits as numbered
/// title / snippet / URL lines (the list is in ``data["results"]``); if every provider fails,
/// the error says why each one did. Keys never appear in any text or data.
///
/// Endpoints can be replaced with ``tavily_url``, ``duckduckgo_url``, ``brave_url`` and
/// ``serpapi_url``, or the ``AGENTMAKER_TAVILY_URL`` (etc.) environment variables; a replacement
/// must use https, or http to a loopback address. Results are external content, and several
/// searches may run in parallel.
#[pyclass(module = "agentmaker", name = "SearchTool", extends = PyTool, frozen)]
pub struct PySearchTool {
    core: Arc<SearchTool>,
}

#[pymethods]
impl PySearchTool {
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

    #[new]
    #[pyo3(signature = (max_results = 5, timeout = 10.0, *, prompts = None, tavily_url = None, duckduckgo_url = None, brave_url = None, serpapi_url = None))]
    fn new(
        max_results: i64,
        timeout: f64,
        prompts: Option<HashMap<String, String>>,
        tavily_url: Option<String>,
        duckduckgo_url: Option<String>,
        brave_url: Option<String>,
        serpapi_url: Option<String>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let opts = SearchOptions {
            max_results: positive("max_results", max_results)?,
            timeout: timeout_seconds(timeout)?,
            endpoints: Endpoints {
                tavily: tavily_url,
                duckduckgo: duckduckgo_url,
                brave: brave_url,
                serpapi: serpapi_url,
            },
            prompts,
        };
        let core = Arc::new(SearchTool::new(opts)?);
        Ok(PyTool::native_subclass(core.clone(), PySearchTool { core }))
    }

    /// The most results a search returns.
    #[getter]
    fn max_results(&self) -> usize {
        self.core.max_results()
    }

    /// Seconds each provider request may take. (``timeout``, the per-call limit the agent
    /// applies to any tool, is left at its default: a call may try up to four providers.)
    #[getter]
    fn request_timeout(&self) -> f64 {
        self.core.timeout().as_secs_f64()
    }
}
