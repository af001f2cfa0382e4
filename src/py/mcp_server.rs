//! `_native._McpServer`: the MCP server side ([`crate::mcp_server`]) for
//! `agentmaker.mcp.serve`, which runs every call through the agent's call pipeline.
//!
//! Python pulls work (`next_event`) and pushes answers (`reply`), so no tokio thread ever
//! waits for the GIL on a call's path; the only Python called from a tokio-owned thread is a
//! user's authorization checker, on a blocking thread.

use crate::mcp_server::http::{self, Authorize, Bearer, HttpOptions};
use crate::mcp_server::{stdio, Event, Hub, Identity, Reply};
use crate::py::bridge::{self, Deliver};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

#[pyclass(module = "agentmaker._native", name = "_McpServer", frozen)]
pub struct PyMcpServer {
    hub: Arc<Hub>,
}

/// A Python callable given the `Authorization` header (or None) that returns whether the
/// request may proceed; an exception refuses it.
struct CallableAuthorize(Py<PyAny>);

impl Authorize for CallableAuthorize {
    fn allows(&self, header: Option<&str>) -> bool {
        Python::attach(|py| {
            self.0
                .bind(py)
                .call1((header,))
                .and_then(|answer| answer.is_truthy())
                .unwrap_or(false)
        })
    }
}

fn none(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(py.None())
}

/// An event as Python sees it (see `next_event`).
fn event_tuple(py: Python<'_>, event: Option<Event>) -> PyResult<Py<PyAny>> {
    Ok(match event {
        None => py.None(),
        Some(Event::Call {
            id,
            name,
            arguments,
            can_elicit,
            progress,
        }) => ("call", id, name, arguments, can_elicit, progress)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        Some(Event::Cancel { id }) => ("cancel", id).into_pyobject(py)?.into_any().unbind(),
    })
}

fn owned_fd(fd: i32) -> PyResult<OwnedFd> {
    if fd < 0 {
        return Err(PyValueError::new_err(format!("bad file descriptor {fd}")));
    }
    // SAFETY: the caller hands over a descriptor it duplicated for us and never closes.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[pymethods]
impl PyMcpServer {
    #[new]
    #[pyo3(signature = (name, version, instructions = None, max_concurrent_calls = None))]
    fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        max_concurrent_calls: Option<usize>,
    ) -> PyResult<Self> {
        if max_concurrent_calls == Some(0) {
            return Err(PyValueError::new_err(
                "max_concurrent_calls must be at least 1 (None for no limit)",
            ));
        }
        let identity = Identity {
            name,
            version,
            instructions,
        };
        let hub = Hub::new(identity, max_concurrent_calls)
            .map_err(|e| PyOSError::new_err(format!("cannot start the MCP server: {e}")))?;
        Ok(PyMcpServer { hub })
    }

    /// Replace the listed tools (a JSON array of MCP tool objects); True when they changed.
    fn set_tools(&self, tools_json: &str) -> PyResult<bool> {
        let tools = serde_json::from_str(tools_json)
            .map_err(|e| PyValueError::new_err(format!("bad tool list: {e}")))?;
        Ok(self.hub.set_tools(tools))
    }

    /// Awaitable: the next event, `("call", id, name, arguments_json, can_elicit, progress)`
    /// or `("cancel", id)`, or None once the server stopped.
    fn next_event<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        bridge::spawn_abortable_for_loop(py, async move {
            let event = hub.next_event().await;
            Box::new(move |py: Python<'_>| event_tuple(py, event)) as Deliver
        })
    }

    /// `next_event` for a worker thread: blocks (without the GIL) until an event arrives.
    fn next_event_blocking(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let hub = self.hub.clone();
        let event = py.detach(|| crate::py::runtime().block_on(hub.next_event()));
        event_tuple(py, event)
    }

    /// The answer to call `id`; `structured` is the structured result as JSON text.
    #[pyo3(signature = (id, text, is_error, structured = None))]
    fn reply(
        &self,
        id: u64,
        text: String,
        is_error: bool,
        structured: Option<&str>,
    ) -> PyResult<()> {
        let structured = structured
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| PyValueError::new_err(format!("bad structured result: {e}")))?;
        self.hub.reply(
            id,
            Reply {
                text,
                is_error,
                structured,
            },
        );
        Ok(())
    }

    /// Awaitable: asks the client of call `id` to approve it; None when approved, else the
    /// reason it was not.
    fn confirm<'py>(
        &self,
        py: Python<'py>,
        id: u64,
        message: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        bridge::spawn_abortable_for_loop(py, async move {
            let answer = hub.confirm(id, message).await;
            Box::new(move |py: Python<'_>| match answer {
                Ok(()) => none(py),
                Err(reason) => Ok(reason.into_pyobject(py)?.into_any().unbind()),
            }) as Deliver
        })
    }

    /// Awaitable: asks the person at the client of call `id` a served `ask_user` question
    /// (see [`Hub::ask`]); `(answer, None)` or `(None, reason)`.
    #[pyo3(signature = (id, question, choices = None))]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        id: u64,
        question: String,
        choices: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        bridge::spawn_abortable_for_loop(py, async move {
            let answer = hub.ask(id, question, choices).await;
            Box::new(move |py: Python<'_>| {
                let pair = match answer {
                    Ok(answer) => (Some(answer), None),
                    Err(reason) => (None, Some(reason)),
                };
                Ok(pair.into_pyobject(py)?.into_any().unbind())
            }) as Deliver
        })
    }

    /// Awaitable: reports progress of call `id` (nothing when its client asked for none).
    #[pyo3(signature = (id, progress, total = None, message = None))]
    fn progress<'py>(
        &self,
        py: Python<'py>,
        id: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hub = self.hub.clone();
        bridge::spawn_for_loop(py, async move {
            hub.progress(id, progress, total, message).await;
            Box::new(none) as Deliver
        })
    }

    /// Stop serving: listeners close, pending calls end, `next_event` gives None.
    fn stop(&self) {
        self.hub.stop();
    }

    /// Awaitable: serve one client on two descriptors (ours to close; pipes, sockets, ttys or
    /// files) until it leaves.
    fn serve_stdio<'py>(
        &self,
        py: Python<'py>,
        read_fd: i32,
        write_fd: i32,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (read, write) = (owned_fd(read_fd)?, owned_fd(write_fd)?);
        let hub = self.hub.clone();
        bridge::spawn_abortable_for_loop(py, async move {
            let done = stdio::serve_stdio(hub, read, write).await;
            Box::new(move |py: Python<'_>| {
                done.map_err(|e| PyOSError::new_err(e.to_string()))?;
                none(py)
            }) as Deliver
        })
    }

    /// Awaitable: bind streamable HTTP and serve in the background until `stop`; resolves to
    /// the bound `(host, port)`.
    #[pyo3(signature = (host, port, path, stateless, allowed_hosts, allowed_origins, max_body_bytes, token = None, authorize = None))]
    fn bind_http<'py>(
        &self,
        py: Python<'py>,
        host: &str,
        port: u16,
        path: String,
        stateless: bool,
        allowed_hosts: Vec<String>,
        allowed_origins: Vec<String>,
        max_body_bytes: usize,
        token: Option<String>,
        authorize: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ip: IpAddr = match host {
            "localhost" => IpAddr::from([127, 0, 0, 1]),
            other => other.parse().map_err(|_| {
                PyValueError::new_err(format!(
                    "host must be an IP address or 'localhost', got {other:?}"
                ))
            })?,
        };
        let authorize: Option<Arc<dyn Authorize>> = match (token, authorize) {
            (Some(token), _) => Some(Arc::new(Bearer(token))),
            (None, Some(check)) => Some(Arc::new(CallableAuthorize(check))),
            (None, None) => None,
        };
        let options = HttpOptions {
            path,
            stateless,
            allowed_hosts,
            allowed_origins,
            max_body_bytes,
            authorize,
        };
        let hub = self.hub.clone();
        bridge::spawn_for_loop(py, async move {
            let bound = http::bind(hub, SocketAddr::new(ip, port), options).await;
            let bound = bound.map(|(addr, serving)| {
                crate::py::runtime().spawn(serving);
                addr
            });
            Box::new(move |py: Python<'_>| {
                let addr = bound
                    .map_err(|e| PyOSError::new_err(format!("cannot serve on {ip}:{port}: {e}")))?;
                Ok(PyTuple::new(
                    py,
                    [
                        addr.ip().to_string().into_pyobject(py)?.into_any(),
                        addr.port().into_pyobject(py)?.into_any(),
                    ],
                )?
                .into_any()
                .unbind())
            }) as Deliver
        })
    }
}
