//! The model client's native half (`agentmaker.llm.LLMClient` is the public front): one
//! [`Endpoint`] per client, called with the GIL released (sync) or awaited on the running
//! loop (async), and a stream object read either way.

use crate::llm::{Call, Endpoint, EndpointOptions, LlmError, Provider, Reply, ReplyStream};
use crate::py::bridge::{self, Deliver};
use crate::py::convert::{py_to_value, value_to_py};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The exception a failed call raises (see the `From<LlmError>` in [`crate::py::errors`]).
fn raise(_py: Python<'_>, err: LlmError) -> PyErr {
    err.into()
}

fn reply_to_py(py: Python<'_>, reply: Result<Reply, LlmError>) -> PyResult<Py<PyAny>> {
    let reply = reply.map_err(|e| raise(py, e))?;
    Ok(value_to_py(py, &reply.into_value())?.unbind())
}

/// Runs `fut` on the shared runtime with the GIL released, waking every 100 ms so Python can
/// run its signal handlers: on Ctrl-C the future is dropped (the request aborted, its
/// connection closed) and KeyboardInterrupt raised.
fn wait_interruptibly<T: Send>(
    py: Python<'_>,
    fut: impl std::future::Future<Output = T> + Send,
) -> PyResult<T> {
    let mut fut = Box::pin(fut);
    loop {
        let done = py.detach(|| {
            crate::py::runtime().block_on(async {
                tokio::time::timeout(Duration::from_millis(100), &mut fut)
                    .await
                    .ok()
            })
        });
        match done {
            Some(value) => return Ok(value),
            None => py.check_signals()?,
        }
    }
}

fn json_of(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    py_to_value(obj)
        .map_err(|e| PyTypeError::new_err(format!("{what} must be JSON data: {}", e.describe())))
}

/// The neutral call from the Python arguments.
fn to_call(
    messages: &Bound<'_, PyAny>,
    tools: Option<&Bound<'_, PyAny>>,
    params: &Bound<'_, PyAny>,
) -> PyResult<Call> {
    let Value::Array(messages) = json_of("messages", messages)? else {
        return Err(PyTypeError::new_err(
            "messages must be a list of message dicts",
        ));
    };
    let tools = match tools.filter(|t| !t.is_none()) {
        None => None,
        Some(t) => match json_of("tools", t)? {
            Value::Array(items) => Some(items),
            _ => return Err(PyTypeError::new_err("tools must be a list of tool entries")),
        },
    };
    let Value::Object(params) = json_of("the request parameters", params)? else {
        return Err(PyTypeError::new_err(
            "the request parameters must be a dict",
        ));
    };
    Ok(Call {
        messages,
        tools,
        params,
        stream: false,
    })
}

fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(PyValueError::new_err(format!(
            "{name} must be a positive number of seconds, got {value}"
        )))
    }
}

/// One model endpoint: provider, URL, model, key, timeouts and retries; private to
/// `agentmaker.llm`.
#[pyclass(module = "agentmaker._native", name = "_LlmEndpoint", frozen)]
pub struct PyLlmEndpoint {
    inner: Arc<Endpoint>,
}

#[pymethods]
impl PyLlmEndpoint {
    #[new]
    #[pyo3(signature = (provider, model, base_url, api_key, headers, connect_timeout, read_timeout, max_retries))]
    fn new(
        provider: &str,
        model: String,
        base_url: String,
        api_key: Option<String>,
        headers: Vec<(String, String)>,
        connect_timeout: f64,
        read_timeout: f64,
        max_retries: u32,
    ) -> PyResult<Self> {
        let provider = Provider::parse(provider).map_err(PyValueError::new_err)?;
        let opts = EndpointOptions {
            provider,
            base_url: base_url.trim_end_matches('/').to_string(),
            model,
            api_key,
            headers,
            connect_timeout: seconds("connect_timeout", connect_timeout)?,
            read_timeout: seconds("read_timeout", read_timeout)?,
            max_retries,
        };
        let inner = Endpoint::new(opts).map_err(PyValueError::new_err)?;
        Ok(PyLlmEndpoint {
            inner: Arc::new(inner),
        })
    }

    /// One reply as a dict; blocks with the GIL released.
    #[pyo3(signature = (messages, tools, params))]
    fn chat(
        &self,
        py: Python<'_>,
        messages: &Bound<'_, PyAny>,
        tools: Option<&Bound<'_, PyAny>>,
        params: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let call = to_call(messages, tools, params)?;
        let inner = self.inner.clone();
        let reply = wait_interruptibly(py, async move { inner.chat(&call).await })?;
        reply_to_py(py, reply)
    }

    /// An asyncio future of the reply dict on the running loop; cancelling it aborts the
    /// request (its connection is closed).
    #[pyo3(signature = (messages, tools, params))]
    fn achat<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'py, PyAny>,
        tools: Option<&Bound<'py, PyAny>>,
        params: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = to_call(messages, tools, params)?;
        let inner = self.inner.clone();
        bridge::spawn_abortable_for_loop(py, async move {
            let reply = inner.chat(&call).await;
            Box::new(move |py: Python<'_>| reply_to_py(py, reply)) as Deliver
        })
    }

    /// A stream of the reply; nothing is sent before its first read.
    #[pyo3(signature = (messages, tools, params))]
    fn stream(
        &self,
        messages: &Bound<'_, PyAny>,
        tools: Option<&Bound<'_, PyAny>>,
        params: &Bound<'_, PyAny>,
    ) -> PyResult<PyLlmStream> {
        let call = to_call(messages, tools, params)?;
        let state = State::Pending(self.inner.clone(), Box::new(call));
        Ok(PyLlmStream {
            state: Arc::new(tokio::sync::Mutex::new(state)),
        })
    }

    fn __repr__(&self) -> String {
        let o = self.inner.options();
        format!(
            "_LlmEndpoint(provider={:?}, model={:?}, base_url={:?})",
            o.provider.name(),
            o.model,
            o.base_url
        )
    }
}

enum State {
    Pending(Arc<Endpoint>, Box<Call>),
    Open(Box<ReplyStream>),
    Done(Option<Box<Reply>>),
}

/// The next delta of a stream (sending the request on the first call).
async fn step(state: Arc<tokio::sync::Mutex<State>>) -> Result<Option<String>, LlmError> {
    let mut state = state.lock().await;
    if let State::Pending(endpoint, call) = &*state {
        let opened = endpoint.clone().stream(call).await;
        match opened {
            Ok(stream) => *state = State::Open(Box::new(stream)),
            Err(e) => {
                *state = State::Done(None);
                return Err(e);
            }
        }
    }
    let State::Open(stream) = &mut *state else {
        return Ok(None);
    };
    match stream.next().await {
        Ok(Some(delta)) => Ok(Some(delta)),
        Ok(None) => {
            let reply = stream.reply().cloned().map(Box::new);
            *state = State::Done(reply);
            Ok(None)
        }
        Err(e) => {
            *state = State::Done(None);
            Err(e)
        }
    }
}

fn delta_to_py(py: Python<'_>, delta: Result<Option<String>, LlmError>) -> PyResult<Py<PyAny>> {
    match delta.map_err(|e| raise(py, e))? {
        Some(text) => Ok(pyo3::types::PyString::new(py, &text).into_any().unbind()),
        None => Ok(py.None()),
    }
}

/// A reply being streamed; private to `agentmaker.llm` (`LLMStream` is the public front).
#[pyclass(module = "agentmaker._native", name = "_LlmStream", frozen)]
pub struct PyLlmStream {
    state: Arc<tokio::sync::Mutex<State>>,
}

#[pymethods]
impl PyLlmStream {
    /// The next text delta, or None at the end; blocks with the GIL released.
    fn next_delta(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let delta = wait_interruptibly(py, step(self.state.clone())).inspect_err(|_| {
            close(self.state.clone()); // interrupted mid-read: the stream cannot go on
        })?;
        delta_to_py(py, delta)
    }

    /// An asyncio future of the next delta (None at the end); cancelling it aborts the read
    /// and closes the stream.
    fn anext_delta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let state = self.state.clone();
        let guard = CloseOnDrop(Some(self.state.clone()));
        bridge::spawn_abortable_for_loop(py, async move {
            let delta = step(state).await;
            guard.disarm();
            Box::new(move |py: Python<'_>| delta_to_py(py, delta)) as Deliver
        })
    }

    /// The whole reply as a dict once the stream is over, else None.
    fn reply(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.state.try_lock().as_deref() {
            Ok(State::Done(Some(reply))) => {
                Ok(value_to_py(py, &(**reply).clone().into_value())?.unbind())
            }
            _ => Ok(py.None()),
        }
    }

    /// Stops reading: the response is dropped and its connection closed.
    fn close(&self) {
        close(self.state.clone());
    }
}

fn close(state: Arc<tokio::sync::Mutex<State>>) {
    fn shut(s: &mut State) {
        if !matches!(s, State::Done(_)) {
            *s = State::Done(None);
        }
    }
    if let Ok(mut s) = state.try_lock() {
        shut(&mut s);
        return;
    }
    // A read is in flight (on another thread): close once it lets go.
    crate::py::runtime().spawn(async move {
        shut(&mut *state.lock().await);
    });
}

/// Closes the stream when an async read is dropped before it finished (its task aborted).
struct CloseOnDrop(Option<Arc<tokio::sync::Mutex<State>>>);

impl CloseOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(state) = self.0.take() {
            close(state);
        }
    }
}

/// A whole reply body read by `provider`'s codec (for `agentmaker.llm.parse_chat_completion`).
#[pyfunction]
pub fn _parse_llm_reply(py: Python<'_>, provider: &str, body: &[u8]) -> PyResult<Py<PyAny>> {
    let provider = Provider::parse(provider).map_err(PyValueError::new_err)?;
    reply_to_py(py, crate::llm::parse_reply(provider, body))
}
