//! `MCPClient` and `MCPTool`: the Python face of `crate::mcp`.
//!
//! Every wait on the server happens on the shared tokio runtime: async methods return
//! coroutines (`coroutines.rs`) that await futures resolved on the loop thread
//! (`bridge.rs`; no tokio thread takes the GIL), and the sync `execute_tool` path blocks
//! in `McpTool`'s `NativeTool::call` with the GIL released.

use crate::py::bridge::{self, Deliver};

use crate::mcp::client::{
    ClientConfig, HttpConfig, McpClient, McpError, TransportConfig, DEFAULT_MAX_DESC_CHARS,
    DEFAULT_MAX_RESULT_CHARS, DEFAULT_MAX_TOOLS,
};
use crate::mcp::http::HeaderSource;
use crate::mcp::stdio::StdioConfig;
use crate::py::convert::saturating_i64;
use crate::py::convert::type_name;
use crate::py::coroutines::await_method;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// A Python callable returning a dict of headers, asked before every HTTP request. Called
/// from a blocking thread (see `mcp::http`), so holding the GIL there blocks no executor.
struct CallableHeaders(Py<PyAny>);

impl HeaderSource for CallableHeaders {
    fn headers(&self) -> Result<Vec<(String, String)>, String> {
        Python::attach(|py| {
            let out = self.0.bind(py).call0().map_err(|e| e.to_string())?;
            let dict = out.cast::<PyDict>().map_err(|_| {
                "the auth callable must return a dict of header names to values".to_string()
            })?;
            let mut pairs = Vec::with_capacity(dict.len());
            for (k, v) in dict.iter() {
                let (Ok(k), Ok(v)) = (k.extract::<String>(), v.extract::<String>()) else {
                    return Err(
                        "the auth callable must return str header names and values".to_string()
                    );
                };
                pairs.push((k, v));
            }
            Ok(pairs)
        })
    }
}

fn mcp_error(_py: Python<'_>, err: McpError) -> PyErr {
    err.into()
}

fn str_map(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Vec<(String, String)>>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let dict = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a dict of str to str")))?;
    let mut out = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let (Ok(k), Ok(v)) = (k.extract::<String>(), v.extract::<String>()) else {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a dict of str to str"
            )));
        };
        out.push((k, v));
    }
    Ok(Some(out))
}

/// The shortest `timeout` taken (1 ms): shorter ones round to nothing.
const MIN_TIMEOUT_SECS: f64 = 0.001;

/// Each pin must be a sha256 hex digest, as `MCPTool.fingerprint` gives it: a typo (a
/// `sha256:` prefix, a trailing newline) would otherwise be reported at `load_tools` as a tool
/// the server changed.
fn check_pins(pins: &HashMap<String, String>) -> PyResult<()> {
    let mut bad: Vec<_> = pins
        .iter()
        .filter(|(_, v)| v.len() != 64 || !v.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect();
    bad.sort();
    match bad.first() {
        None => Ok(()),
        Some((name, value)) => Err(PyValueError::new_err(format!(
            "expected_fingerprints[{name:?}] must be a sha256 hex digest (64 hex characters, as \
             MCPTool.fingerprint gives it), got {value:?}{}",
            if bad.len() > 1 {
                format!(" ({} pins are malformed)", bad.len())
            } else {
                String::new()
            }
        ))),
    }
}

fn positive_limit(value: Count, what: &str) -> PyResult<usize> {
    match value.0 {
        Err(kind) => Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {kind}"
        ))),
        Ok(n) if n < 1 => Err(PyValueError::new_err(format!(
            "{what} must be >= 1, got {}",
            value.1
        ))),
        Ok(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// A limit argument (`max_tools=`, ...) as given: an int saturated to an `i64` (10**30 means
/// no practical limit, and is taken as the largest; pyo3's own extraction raised a bare
/// OverflowError) and its text, or the name of the type that is not an int. Anything with
/// `__index__` counts as an int (numpy's ints do); a bool does not, Python's or numpy's.
/// [`positive_limit`] words the error, naming the argument.
struct Count(Result<i64, String>, String);

impl Count {
    const fn new(n: i64) -> Count {
        Count(Ok(n), String::new())
    }
}

/// Python's bool, or numpy's (its type is named `bool` too, and is no int subclass).
fn is_bool(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyBool>() || type_name(obj) == "bool"
}

/// `obj` as a Python int (through `__index__`, as `operator.index` does), or None.
fn as_int<'py>(obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    if obj.is_instance_of::<PyInt>() {
        return Some(obj.clone());
    }
    let index = obj.py().import("operator").ok()?.getattr("index").ok()?;
    index.call1((obj,)).ok()
}

impl FromPyObject<'_, '_> for Count {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        let Some(int) = as_int(&obj).filter(|_| !is_bool(&obj)) else {
            return Ok(Count(Err(type_name(&obj)), String::new()));
        };
        let n = saturating_i64(&int)?;
        // str() of an int of more than 4300 digits raises: such a one is only named.
        let text = int
            .str()
            .map(|t| t.to_string())
            .unwrap_or_else(|_| "an int below -2**63".into());
        Ok(Count(Ok(n), text))
    }
}

/// `timeout=` in seconds: an int, a float or anything with `__float__` or `__index__`, else
/// the name of its type; a bool is refused rather than read as one second. An int too large
/// for a float is as long as forever (and cut like any timeout over 10^9 s).
struct Seconds(Result<f64, String>);

impl FromPyObject<'_, '_> for Seconds {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let obj = obj.to_owned();
        if is_bool(&obj) {
            return Ok(Seconds(Err("bool".into())));
        }
        if let Ok(secs) = obj.extract::<f64>() {
            return Ok(Seconds(Ok(secs)));
        }
        Ok(Seconds(match as_int(&obj) {
            Some(int) if int.gt(0)? => Ok(f64::MAX),
            Some(_) => Ok(f64::MIN),
            None => Err(type_name(&obj)),
        }))
    }
}

/// Connection to one MCP server whose tools become :class:`MCPTool` objects.
///
/// Exactly one of ``command`` (a local server started as a child process, speaking MCP on its
/// stdio) or ``url`` (a streamable-HTTP endpoint) is required. Use it as ``async with``; the
/// tools work while the block is alive, and leaving it stops the server process (its whole
/// process group) or ends the HTTP session.
///
/// ``namespace`` is yours, never the server's: tools are named ``{namespace}_{remote name}``
/// and stamped with origin ``"mcp:{namespace}"``. ``requires_confirmation`` applies to every
/// loaded tool. ``expected_fingerprints`` (``{display_name: sha256}``) is an exact pin set.
/// ``timeout`` (seconds, or None) bounds the handshake, the listing and every call.
///
/// stdio: the child gets only ``HOME LOGNAME PATH SHELL TERM USER LANG LC_ALL LC_CTYPE
/// TMPDIR`` from this process, plus ``env``; ``cwd`` sets its directory.
///
/// HTTP: ``https://`` is required except for loopback hosts (or with
/// ``allow_insecure_http=True``); credentials inside the URL are refused. ``headers`` go on
/// every request; ``auth`` is a bearer token (str) or a callable returning a dict of headers,
/// called before every request. An ``httpx.Auth`` object is not accepted: its generator
/// protocol needs httpx to perform the exchange, and here reqwest (Rust) performs it.
#[pyclass(module = "agentmaker._native", name = "MCPClient", frozen)]
pub struct PyMcpClient {
    inner: Arc<McpClient>,
    auth_callable: Option<Py<PyAny>>,
    command: Option<String>,
    args: Vec<String>,
    url: Option<String>,
}

#[pymethods]
impl PyMcpClient {
    #[new]
    #[pyo3(signature = (command=None, args=None, env=None, cwd=None, url=None, headers=None, auth=None, *,
        namespace, requires_confirmation=true, expected_fingerprints=None, max_tools=Count::new(DEFAULT_MAX_TOOLS as i64),
        max_result_chars=Count::new(DEFAULT_MAX_RESULT_CHARS as i64), max_desc_chars=Count::new(DEFAULT_MAX_DESC_CHARS as i64),
        timeout=Some(Seconds(Ok(30.0))), allow_insecure_http=false, prompts=None),
        text_signature = "(command=None, args=None, env=None, cwd=None, url=None, headers=None, auth=None, *, namespace, requires_confirmation=True, expected_fingerprints=None, max_tools=128, max_result_chars=50000, max_desc_chars=4096, timeout=30.0, allow_insecure_http=False, prompts=None)")]
    fn new(
        py: Python<'_>,
        command: Option<String>,
        args: Option<&Bound<'_, PyAny>>,
        env: Option<&Bound<'_, PyAny>>,
        cwd: Option<std::path::PathBuf>,
        url: Option<String>,
        headers: Option<&Bound<'_, PyAny>>,
        auth: Option<&Bound<'_, PyAny>>,
        namespace: String,
        requires_confirmation: bool,
        expected_fingerprints: Option<HashMap<String, String>>,
        max_tools: Count,
        max_result_chars: Count,
        max_desc_chars: Count,
        timeout: Option<Seconds>,
        allow_insecure_http: bool,
        prompts: Option<HashMap<String, String>>,
    ) -> PyResult<Self> {
        // Infinity means no timeout, like None; beyond 10^9 s (31 years) it is cut to that.
        let timeout = match timeout.map(|s| s.0).transpose().map_err(|kind| {
            PyTypeError::new_err(format!(
                "timeout must be a number of seconds or None, not {kind}"
            ))
        })? {
            None => None,
            Some(t) if t == f64::INFINITY => None,
            Some(t) if t >= MIN_TIMEOUT_SECS => Some(Duration::from_secs_f64(t.min(1e9))),
            Some(t) if t > 0.0 => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be at least {MIN_TIMEOUT_SECS} seconds (or None for no timeout), got {t}"
                )))
            }
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be a positive number of seconds or None, got {t}"
                )))
            }
        };
        if let Some(pins) = &expected_fingerprints {
            check_pins(pins)?;
        }
        let max_tools = positive_limit(max_tools, "max_tools")?;
        let max_result_chars = positive_limit(max_result_chars, "max_result_chars")?;
        let max_desc_chars = positive_limit(max_desc_chars, "max_desc_chars")?;
        let args = match args.filter(|a| !a.is_none()) {
            None => None,
            Some(a) if a.is_instance_of::<PyString>() => {
                return Err(PyTypeError::new_err(
                    "args must be a list of strings, not one string (args=[\"server.py\"], not args=\"server.py\")",
                ))
            }
            Some(a) => Some(a.extract::<Vec<String>>().map_err(|_| {
                PyTypeError::new_err("args must be a list of strings")
            })?),
        };
        let env = str_map(env, "env")?;
        let headers = str_map(headers, "headers")?;
        let auth = auth.filter(|a| !a.is_none());
        let transport = match (&command, &url) {
            (Some(cmd), None) => {
                if headers.is_some() || auth.is_some() {
                    return Err(PyValueError::new_err(
                        "stdio mode (command) does not accept headers/auth; they are for url=",
                    ));
                }
                TransportConfig::Stdio(StdioConfig {
                    command: cmd.clone(),
                    args: args.clone().unwrap_or_default(),
                    env: env.unwrap_or_default(),
                    cwd: cwd.map(|p| p.to_string_lossy().into_owned()),
                })
            }
            (None, Some(u)) => {
                if args.as_ref().is_some_and(|a| !a.is_empty()) || env.is_some() || cwd.is_some() {
                    return Err(PyValueError::new_err(
                        "Remote HTTP mode (url) does not accept args/env/cwd; they are for command=",
                    ));
                }
                let mut http = HttpConfig {
                    url: u.clone(),
                    headers: headers.unwrap_or_default(),
                    allow_insecure_http,
                    ..Default::default()
                };
                if let Some(a) = auth {
                    if let Ok(token) = a.cast::<PyString>() {
                        if token.to_str()?.trim().is_empty() {
                            return Err(PyValueError::new_err(
                                "auth: an empty bearer token would send \"Authorization: Bearer \" on every request; pass None for no auth",
                            ));
                        }
                        http.bearer = Some(token.to_string());
                    } else if a.hasattr("auth_flow")? {
                        return Err(PyTypeError::new_err(
                            "auth: httpx.Auth objects are not supported (their request/response generator needs httpx to \
                             perform the HTTP exchange; agentmaker's client is Rust). Pass a bearer token string, or a \
                             callable returning a dict of headers that is called before every request.",
                        ));
                    } else if a.is_callable()
                        && py
                            .import("inspect")?
                            .call_method1("iscoroutinefunction", (a,))?
                            .is_truthy()?
                    {
                        return Err(PyTypeError::new_err(
                            "auth: the callable must be a plain function returning a dict of headers, not async: it is \
                             called before every request from a worker thread, with no event loop to await it",
                        ));
                    } else if a.is_callable() {
                        http.header_source = Some(Arc::new(CallableHeaders(a.clone().unbind())));
                    } else {
                        return Err(PyTypeError::new_err(
                            "auth must be a bearer token string or a callable returning a dict of headers",
                        ));
                    }
                }
                TransportConfig::Http(http)
            }
            _ => {
                return Err(PyValueError::new_err(
                    "MCPClient transport must be exactly one: local uses command=..., remote uses url=... (not both, not neither)",
                ))
            }
        };
        let prompts = crate::mcp::default_prompts(prompts)?;
        let cfg = ClientConfig {
            transport,
            namespace,
            requires_confirmation,
            expected_fingerprints: expected_fingerprints
                .map(|m| m.into_iter().collect::<BTreeMap<_, _>>()),
            max_tools,
            max_result_chars,
            max_desc_chars,
            timeout,
            prompts,
        };
        let inner = McpClient::new(cfg).map_err(|e| mcp_error(py, e))?;
        Ok(PyMcpClient {
            inner: Arc::new(inner),
            auth_callable: auth.filter(|a| a.is_callable()).map(|a| a.clone().unbind()),
            command,
            args: args.unwrap_or_default(),
            url,
        })
    }

    /// Start the server (or open the HTTP session) and run the MCP handshake.
    fn __aenter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        await_method(slf.as_any(), "_aenter_on_loop", vec![])
    }

    /// Close the session and stop the server; exceptions from the block propagate.
    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        slf: &Bound<'py, Self>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let exiting = PyBool::new(slf.py(), true).to_owned().into_any();
        await_method(slf.as_any(), "_aclose_on_loop", vec![exiting])
    }

    /// Close the session (same as leaving ``async with``). Closing twice is harmless.
    fn aclose<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let exiting = PyBool::new(slf.py(), false).to_owned().into_any();
        await_method(slf.as_any(), "_aclose_on_loop", vec![exiting])
    }

    /// What ``__aenter__``'s coroutine awaits: starts the handshake on the running loop.
    fn _aenter_on_loop<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let inner = slf.get().inner.clone();
        let me: Py<PyAny> = slf.into_any().unbind();
        // Given up on (a cancelled task, `asyncio.wait_for`), the handshake stops and the
        // server it started is killed.
        bridge::spawn_abortable_for_loop(py, async move {
            let result = inner.connect().await;
            Box::new(move |py: Python<'_>| {
                result.map_err(|e| mcp_error(py, e))?;
                Ok(me)
            }) as Deliver
        })
    }

    /// What ``aclose`` and ``__aexit__`` await: closes on the running loop, then resolves to
    /// False when leaving ``async with`` (exceptions from the block propagate), else None.
    fn _aclose_on_loop<'py>(slf: &Bound<'py, Self>, exiting: bool) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let inner = slf.get().inner.clone();
        bridge::spawn_for_loop(py, async move {
            inner.close().await;
            Box::new(move |py: Python<'_>| {
                Ok(if exiting {
                    PyBool::new(py, false).to_owned().into_any().unbind()
                } else {
                    py.None()
                })
            }) as Deliver
        })
    }

    /// List the server's tools and return them as :class:`MCPTool` objects, sorted by name.
    ///
    /// Raises ToolError when the catalog is refused: more than ``max_tools`` tools, a schema
    /// that is too large, too deep or references anything outside itself, a bad name, or a
    /// fingerprint that does not match the pins (the message names the tools).
    fn load_tools<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        await_method(slf.as_any(), "_load_tools_on_loop", vec![])
    }

    /// What ``load_tools``' coroutine awaits: asks for the listing on the running loop.
    fn _load_tools_on_loop<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let inner = slf.get().inner.clone();
        bridge::spawn_abortable_for_loop(py, async move {
            let tools = inner.load_tools().await;
            Box::new(move |py: Python<'_>| {
                let tools = tools.map_err(|e| mcp_error(py, e))?;
                let list = PyList::empty(py);
                for t in tools {
                    list.append(PyMcpTool::create(py, t)?)?;
                }
                Ok(list.into_any().unbind())
            }) as Deliver
        })
    }

    #[getter]
    fn namespace(&self) -> &str {
        &self.inner.config().namespace
    }

    #[getter]
    fn command(&self) -> Option<&str> {
        self.command.as_deref()
    }

    #[getter]
    fn args(&self) -> Vec<String> {
        self.args.clone()
    }

    #[getter]
    fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    #[getter]
    fn requires_confirmation(&self) -> bool {
        self.inner.config().requires_confirmation
    }

    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.inner.config().timeout.map(|d| d.as_secs_f64())
    }

    #[getter]
    fn max_tools(&self) -> usize {
        self.inner.config().max_tools
    }

    #[getter]
    fn max_result_chars(&self) -> usize {
        self.inner.config().max_result_chars
    }

    #[getter]
    fn expected_fingerprints(&self) -> Option<BTreeMap<String, String>> {
        self.inner.config().expected_fingerprints.clone()
    }

    /// True between a successful ``__aenter__`` and the close.
    #[getter]
    fn connected(&self) -> bool {
        self.inner.is_connected()
    }

    /// Process id of the stdio server while connected (None for HTTP or when closed).
    #[getter]
    fn server_pid(&self) -> Option<u32> {
        if self.inner.is_connected() {
            self.inner.server_pid()
        } else {
            None
        }
    }

    fn __repr__(&self) -> String {
        let target = self
            .url
            .clone()
            .or_else(|| self.command.clone())
            .unwrap_or_default();
        format!(
            "<MCPClient namespace={:?} target={:?} connected={}>",
            self.inner.config().namespace,
            target,
            self.inner.is_connected()
        )
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(cb) = &self.auth_callable {
            visit.call(cb)?;
        }
        Ok(())
    }
}

mod remote_tool;
pub use remote_tool::PyMcpTool;
