//! `ToolRegistry` for Python: the core registry holding Python tool objects and Rust built-ins.
//!
//! The hot path (`execute_tool`) does one lookup, one JSON conversion of the arguments, one
//! validation with the tool's validator (compiled on its first call), and one call.
//! Registration reads and checks the tool (`entry`); renderings are converted per tool on first
//! use (`render`); a call's admission through the pipeline's gates, for the program's calls and
//! the agent's alike, is in `admit`; running a call and wrapping what it returns is in
//! `outcome`, starting one on the event loop in `started`; finding the tool a call names, by
//! real or wire name, is in `lookup`.

mod admit;
mod entry;
mod isolate;
mod lookup;
mod outcome;
mod render;
mod started;

use crate::executor::messages;
pub(crate) use crate::py::convert::type_name;
use crate::py::convert::value_to_py;
use crate::py::errors::definition;
use crate::py::mcp::PyMcpTool;
use crate::py::response::PyToolResponse;
use crate::py::tool::call_native;
use crate::registry::{ConflictMode, Entry, Registry};
use crate::tool::NameRule;
pub(crate) use admit::{admit_call, exception_problem, Admitted, Gates, Repair};
use entry::{kept_payload, prepare, Payload};
pub(crate) use entry::{kind_of, Kept, PyEntry, Runner};
pub use outcome::_tool_result;
use outcome::error_response;
pub(crate) use outcome::{exception_response, run_admitted};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::RwLockExt;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use render::{Kind, Rendered};
pub(crate) use started::{start_awaitable, Completion, PyStartedCall};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A direct call that passed the gates, or the error response for the caller.
type Admission<'py> = Result<Admitted<'py>, Py<PyToolResponse>>;

#[pyclass(module = "agentmaker._native", name = "ToolRegistry", subclass, frozen)]
pub struct PyToolRegistry {
    inner: RwLock<Registry<Payload>>,
    rendered: Mutex<Option<Arc<Rendered>>>,
}

/// The entry's tool as an MCP tool, if it is one.
pub(crate) fn mcp_tool<'py>(py: Python<'py>, entry: &PyEntry) -> Option<Bound<'py, PyMcpTool>> {
    entry.payload.obj.bind(py).cast::<PyMcpTool>().ok().cloned()
}

impl PyToolRegistry {
    /// Lock discipline: a thread that has to wait for a lock waits detached from the interpreter
    /// (`*_py_attached`), and no Python code runs while a lock is held (no lazy Python-side
    /// initialisation, no error construction, no decref of a tool). Otherwise a holder that
    /// gives up the GIL (a `PyOnceLock` initialising, a finalizer switching threads) would wait
    /// forever for a GIL kept by a thread blocked on the lock.
    fn read(&self, py: Python<'_>) -> RwLockReadGuard<'_, Registry<Payload>> {
        self.inner
            .read_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self, py: Python<'_>) -> RwLockWriteGuard<'_, Registry<Payload>> {
        self.inner
            .write_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn entry(&self, py: Python<'_>, name: &str) -> Option<Arc<PyEntry>> {
        self.read(py).get(name).cloned()
    }

    /// The entries a batch may replace, held by the caller so that replacing them under the write
    /// lock only drops an `Arc` count; the tool objects are released after the lock is.
    fn replaced(&self, py: Python<'_>, names: impl Iterator<Item = String>) -> Vec<Arc<PyEntry>> {
        let reg = self.read(py);
        names.filter_map(|n| reg.get(&n).cloned()).collect()
    }

    /// A direct call's admission: the pipeline's gates 1-4 ([`admit_call`]), with the texts a
    /// model's call gets. The name comes from the program (or a model, through it): one that
    /// is not a str is an error response, and a str that is not UTF-8 (a lone surrogate, which
    /// a JSON `\ud800` escape produces) names no tool. The arguments are a dict or a JSON text.
    fn admit<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyAny>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Admission<'py>> {
        let Ok(name) = name.cast::<PyString>() else {
            let text = messages::name_not_text(&type_name(name));
            return Ok(Err(error_response(py, text)?));
        };
        let name = match name.to_str() {
            Ok(n) => std::borrow::Cow::Borrowed(n),
            Err(_) => name.to_string_lossy(),
        };
        let unknown = |n: &str| self.read(py).unknown_tool_message(n, &|_| true);
        match admit_call(Some(self), &name, parameters, Gates::Direct, &unknown)? {
            Ok(admitted) => Ok(Ok(admitted)),
            Err(refused) => Ok(Err(error_response(py, refused.refusal.text)?)),
        }
    }

    /// The entries `names` selects (every entry for None), in order.
    fn selected(
        &self,
        py: Python<'_>,
        names: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Arc<PyEntry>>> {
        Ok(match names_arg(names)? {
            None => self.read(py).entries().cloned().collect(),
            Some(names) => self
                .read(py)
                .select(Some(&names))
                .into_iter()
                .cloned()
                .collect(),
        })
    }

    /// The catalog or the description of every tool, cached for the registry version.
    fn registry_text(&self, py: Python<'_>, catalog: bool) -> PyResult<Py<PyString>> {
        let rendered = self.rendered(py);
        let cell = if catalog {
            &rendered.catalog
        } else {
            &rendered.description
        };
        let text = cell.get_or_try_init(py, || {
            let text = {
                let reg = self.read(py);
                if catalog {
                    reg.catalog::<&str>(None)
                } else {
                    reg.tools_description::<&str>(None)
                }
            };
            PyResult::Ok(PyString::new(py, &text).unbind())
        })?;
        Ok(text.clone_ref(py))
    }
}

/// A tool's own `timeout` attribute in seconds, if it is a number.
pub(crate) fn own_timeout(tool: &Bound<'_, PyAny>) -> Option<f64> {
    let t = tool
        .getattr_opt(pyo3::intern!(tool.py(), "timeout"))
        .ok()
        .flatten()?;
    if t.is_none() {
        return None;
    }
    t.extract::<f64>().ok()
}

fn names_arg(names: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    match names {
        None => Ok(None),
        Some(n) if n.is_none() => Ok(None),
        Some(n) if n.is_instance_of::<PyString>() => Err(PyTypeError::new_err(
            "names must be a list of tool names, not a single str",
        )),
        Some(n) => {
            let mut out = Vec::new();
            for item in n.try_iter()? {
                out.push(
                    item?
                        .extract::<String>()
                        .map_err(|_| PyTypeError::new_err("names must contain only str"))?,
                );
            }
            Ok(Some(out))
        }
    }
}

#[pymethods]
impl PyToolRegistry {
    /// ``names="strict"`` (the default) accepts the function-calling names of the guide,
    /// ``^[a-zA-Z0-9_-]{1,64}$``; ``names="catalog"`` also accepts catalog names of up to 128
    /// characters with dots, ``::`` or ``/`` (no whitespace or control characters), which
    /// provider renderings send under a wire name. Other arguments are left to a subclass's
    /// ``__init__``.
    #[new]
    #[pyo3(signature = (*_args, names = "strict", **_kwargs))]
    fn new(
        _args: &Bound<'_, PyTuple>,
        names: &str,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let rule: NameRule = names.parse()?;
        Ok(PyToolRegistry {
            inner: RwLock::new(Registry::with_name_rule(rule)),
            rendered: Mutex::new(None),
        })
    }

    /// The name rule given as ``names=``: ``"strict"`` or ``"catalog"``.
    #[getter]
    fn name_rule(&self, py: Python<'_>) -> &'static str {
        self.read(py).name_rule().as_str()
    }

    /// Register one tool. A duplicate name raises ToolRegistrationError unless ``overwrite=True``
    /// (the replaced tool keeps its position).
    #[pyo3(signature = (tool, overwrite = false))]
    fn register(&self, py: Python<'_>, tool: &Bound<'_, PyAny>, overwrite: bool) -> PyResult<()> {
        // A tool registered before needs no Python call: checked and stored under one lock.
        let result = match kept_payload(tool) {
            Some((checked, payload)) => {
                let mut reg = self.write(py);
                let entry = Entry::from_checked(reg.name_rule(), checked, payload)?;
                reg.register(entry, overwrite)
            }
            None => {
                let entry = prepare(tool, self.read(py).name_rule())?;
                self.write(py).register(entry, overwrite)
            }
        };
        // A replaced tool is released after the lock is.
        Ok(result.map(drop)?)
    }

    /// Register several tools at once; returns the names registered. ``on_conflict`` is
    /// ``"raise"`` (nothing is registered if any name is taken), ``"skip"`` or ``"overwrite"``.
    /// If any tool is refused, the registry is left exactly as it was.
    #[pyo3(signature = (tools, on_conflict = "raise"))]
    fn register_all(
        &self,
        py: Python<'_>,
        tools: &Bound<'_, PyAny>,
        on_conflict: &str,
    ) -> PyResult<Vec<String>> {
        let mode: ConflictMode = on_conflict.parse()?;
        let iter = tools.try_iter().map_err(|_| {
            definition(format!(
                "register_all() expects an iterable of tools, got {}",
                type_name(tools)
            ))
        })?;
        let mut entries = Vec::new();
        let rule = self.read(py).name_rule();
        for tool in iter {
            entries.push(prepare(&tool?, rule)?);
        }
        let replaced = self.replaced(py, entries.iter().map(|e| e.name().to_string()));
        let result = self.write(py).register_all(entries, mode);
        drop(replaced);
        Ok(result?)
    }

    /// Remove a tool by name and return it. Raises KeyError if it is not registered.
    fn unregister(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let removed = self.write(py).unregister(name);
        match removed {
            Some(entry) => Ok(entry.payload.obj.clone_ref(py)),
            None => Err(PyKeyError::new_err(format!(
                "no tool named '{name}' is registered"
            ))),
        }
    }

    /// The tool registered under ``name``, or None. ``name`` may also be the wire name a
    /// provider rendering used for a tool whose real name breaks the provider's rule (the real
    /// name wins when both exist).
    fn get(&self, py: Python<'_>, name: &str) -> Option<Py<PyAny>> {
        self.entry_for_call(py, name)
            .map(|e| e.payload.obj.clone_ref(py))
    }

    /// The real name of the tool a call on ``name`` (a real name or a wire name) would run,
    /// or None.
    fn resolve_name(&self, py: Python<'_>, name: &str) -> Option<String> {
        self.entry_for_call(py, name).map(|e| e.name().to_string())
    }

    /// The name a provider rendering (``to_openai_schema``, ``to_anthropic_schema``,
    /// ``to_gemini_schema``) gives the tool registered as ``name``: the name itself when it meets
    /// every provider's rule, otherwise its wire name (``math.factorial`` -> ``math_factorial``).
    fn wire_name(&self, py: Python<'_>, name: &str) -> PyResult<String> {
        if !self.read(py).contains(name) {
            return Err(PyKeyError::new_err(format!(
                "no tool named '{name}' is registered"
            )));
        }
        Ok(self.rendered(py).wire.wire(name).to_string())
    }

    /// Registered names in registration order.
    fn names(&self, py: Python<'_>) -> Vec<String> {
        self.read(py).names().map(str::to_string).collect()
    }

    /// Registered tools in registration order.
    fn list_tools(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.read(py)
            .entries()
            .map(|e| e.payload.obj.clone_ref(py))
            .collect()
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.read(py).len()
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> bool {
        match name.cast::<PyString>() {
            Ok(s) => s
                .to_str()
                .map(|s| self.read(name.py()).contains(s))
                .unwrap_or(false),
            Err(_) => false,
        }
    }

    /// The root JSON Schema of a tool's arguments (the one validation uses), or None.
    fn get_schema<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.entry(py, name)
            .map(|e| value_to_py(py, e.schema()))
            .transpose()
    }

    /// One ``- name: description`` line per tool.
    #[pyo3(signature = (names = None))]
    fn get_catalog(
        &self,
        py: Python<'_>,
        names: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyString>> {
        match names_arg(names)? {
            None => self.registry_text(py, true),
            Some(names) => {
                let text = self.read(py).catalog(Some(&names));
                Ok(PyString::new(py, &text).unbind())
            }
        }
    }

    /// The full text description: each tool with its parameter list. ``names`` renders only
    /// those tools, in that order.
    #[pyo3(signature = (names = None))]
    fn get_tools_description(
        &self,
        py: Python<'_>,
        names: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyString>> {
        match names_arg(names)? {
            None => self.registry_text(py, false),
            Some(names) => {
                let text = self.read(py).tools_description(Some(&names));
                Ok(PyString::new(py, &text).unbind())
            }
        }
    }

    /// The ``tools`` argument for OpenAI-style function calling.
    ///
    /// ``names`` renders only those tools, in that order (duplicates and unknown names are
    /// dropped). ``strict=True`` renders each tool in OpenAI's strict form where its schema
    /// allows it (see :meth:`strict_fallbacks` for the tools that could not be, and why). The
    /// returned dicts are cached and shared between calls: copy one before mutating it.
    #[pyo3(signature = (names = None, strict = false))]
    fn to_openai_schema<'py>(
        &self,
        py: Python<'py>,
        names: Option<&Bound<'py, PyAny>>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let kind = if strict { Kind::Strict } else { Kind::OpenAi };
        render::forms(py, &self.selected(py, names)?, kind, &|| self.rendered(py))
    }

    /// Anthropic's ``tools`` list: ``{"name", "description", "input_schema"}`` per tool.
    #[pyo3(signature = (names = None))]
    fn to_anthropic_schema<'py>(
        &self,
        py: Python<'py>,
        names: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        render::forms(py, &self.selected(py, names)?, Kind::Anthropic, &|| {
            self.rendered(py)
        })
    }

    /// Gemini function declarations (``{"name", "description", "parameters"}``), with each
    /// schema reduced to the subset Gemini accepts ($refs inlined, nullable instead of null).
    #[pyo3(signature = (names = None))]
    fn to_gemini_schema<'py>(
        &self,
        py: Python<'py>,
        names: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        render::forms(py, &self.selected(py, names)?, Kind::Gemini, &|| {
            self.rendered(py)
        })
    }

    /// Tools that ``to_openai_schema(strict=True)`` renders without ``strict``, with the reason,
    /// keyed by real name (not wire name).
    #[pyo3(signature = (names = None))]
    fn strict_fallbacks<'py>(
        &self,
        py: Python<'py>,
        names: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        render::strict_fallbacks(py, &self.selected(py, names)?)
    }

    /// Validate arguments for a tool without running it: an error ToolResponse, or None when
    /// the call may proceed (used to validate before asking a person to confirm). The
    /// arguments are a dict or a JSON text, as for :meth:`execute_tool`.
    fn validate(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        parameters: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyToolResponse>>> {
        Ok(self.admit(py, name, parameters)?.err())
    }

    /// Run a tool: look it up, validate the arguments against its schema, run it and wrap the
    /// result. The arguments are a dict, or the JSON text of an object (the form models send).
    /// Bad model input and exceptions raised by the tool come back as error responses, with
    /// the texts an agent's call gets.
    fn execute_tool(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        parameters: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyToolResponse>> {
        let call = match self.admit(py, name, parameters)? {
            Ok(call) => call,
            Err(resp) => return Ok(resp),
        };
        let isolation = call.entry.isolation(py, None);
        let timeout = isolation.as_ref().and_then(|_| own_timeout(&call.tool));
        run_admitted(
            py,
            call.entry.name(),
            &call.entry,
            &call.args,
            call.params.as_any(),
            isolation.as_ref().map(|i| (i, timeout)),
        )
    }

    /// The tool and how the Agent runs it (``"inline"``, ``"sync"``, ``"dual"`` or
    /// ``"async"``: see :class:`agentmaker._native.CallPipeline`), or None for an unknown name.
    /// The third item is the tool's real name when ``name`` was its wire name, else None.
    fn _lookup(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> Option<(Py<PyAny>, &'static str, Option<String>)> {
        let called = name.cast::<PyString>().ok()?.to_str().ok()?;
        let entry = self.entry_for_call(py, called)?;
        let real = (entry.name() != called).then(|| entry.name().to_string());
        let kind = kind_of(py, &entry, entry.isolation(py, None).is_some()).as_str();
        Some((entry.payload.obj.clone_ref(py), kind, real))
    }

    /// For ``aexecute_tool``: an error ToolResponse (or the result of a Rust built-in that never
    /// blocks, run right here), or the call started: a ``StartedCall`` whose ``awaitable`` the
    /// caller awaits and hands to ``finish`` (or its exception to ``fail``).
    fn _admit<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyAny>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let Admitted {
            entry,
            args,
            params,
            ..
        } = match self.admit(py, name, parameters)? {
            Ok(call) => call,
            Err(resp) => return Ok(resp.into_any()),
        };
        if let Runner::Native(native) = &entry.payload.runner {
            if !native.blocks() {
                return Ok(Py::new(py, call_native(py, native, &args)?)?.into_any());
            }
        }
        let isolation = entry.isolation(py, None);
        match start_awaitable(py, &entry, &args, params.as_any(), isolation.as_ref()) {
            Ok(awaitable) => Ok(Py::new(
                py,
                PyStartedCall::new(&entry, awaitable.unbind(), isolation.is_some(), None),
            )?
            .into_any()),
            Err(err) => Ok(exception_response(py, entry.name(), err)?.into_any()),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(reg) = self.inner.try_read() {
            for entry in reg.entries() {
                visit.call(&entry.payload.obj)?;
                if let Runner::Kwargs(call) = &entry.payload.runner {
                    visit.call(&call.func)?;
                }
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        // The entries are dropped after the lock is released (dropping them releases tools).
        let old = self
            .inner
            .try_write()
            .map(|mut reg| std::mem::take(&mut *reg))
            .ok();
        drop(old);
        let cached = self
            .rendered
            .try_lock()
            .ok()
            .and_then(|mut cache| cache.take());
        drop(cached);
    }
}
