//! `Tool`, the base class of every tool, subclassable from Python.

use crate::py::convert::{py_to_value, value_to_py};
use crate::py::coroutines::{later, Later};
use crate::py::parameter::PyToolParameter;
use crate::py::registry::Kept;
use crate::py::response::PyToolResponse;
use crate::tool::{NativeTool, BUILTIN_ORIGIN};
use pyo3::exceptions::{PyNotImplementedError, PyRuntimeError, PyStopIteration};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCFunction, PyDict, PyList, PyTuple};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// Base class of every tool.
///
/// Subclass it, call ``super().__init__(name, description)``, implement ``get_parameters()``
/// and ``run(parameters)`` and/or ``async arun(parameters)``. The class-level flags
/// ``requires_confirmation``, ``external_content`` and ``supports_parallel`` mean what the
/// ``@tool`` keywords mean. ``origin`` is stamped by the framework (``"builtin"`` for tools
/// defined in this process, ``"mcp:{namespace}"`` for remote ones) and cannot be set by a tool.
#[pyclass(module = "agentmaker", name = "Tool", subclass, dict, weakref)]
pub struct PyTool {
    pub name: String,
    pub description: String,
    pub origin: String,
    pub native: Option<Arc<dyn NativeTool>>,
    /// What the first registration read and checked, kept for the next registries of a tool
    /// whose schema is fixed (`_fixed_schema`, an `@tool` function): see
    /// `src/py/registry/entry.rs`. Cleared when any attribute of the tool is set.
    pub kept: Mutex<Option<Kept>>,
}

impl PyTool {
    /// The initializer of a built-in's Python class `T`: `core` behind the `Tool` base, `tool`
    /// the subclass's own state.
    pub(crate) fn native_subclass<T>(core: Arc<dyn NativeTool>, tool: T) -> PyClassInitializer<T>
    where
        T: pyo3::PyClass<BaseType = PyTool>,
    {
        PyClassInitializer::from(PyTool::native(core)).add_subclass(tool)
    }

    /// The base of a Rust built-in.
    pub fn native(tool: Arc<dyn NativeTool>) -> Self {
        let spec = tool.spec();
        PyTool {
            name: spec.name.clone(),
            description: spec.description.clone(),
            origin: BUILTIN_ORIGIN.to_string(),
            native: Some(tool),
            kept: Mutex::new(None),
        }
    }

    /// Base for a tool whose origin the framework stamps (e.g. `mcp:{namespace}`).
    pub fn with_origin(name: String, description: String, origin: String) -> Self {
        PyTool {
            name,
            description,
            origin,
            native: None,
            kept: Mutex::new(None),
        }
    }
}

impl PyTool {
    /// What an earlier registration kept, if anything.
    pub fn kept(&self) -> Option<Kept> {
        self.kept.lock().ok().and_then(|kept| kept.clone())
    }

    pub fn keep(&self, kept: Kept) {
        if let Ok(mut slot) = self.kept.lock() {
            *slot = Some(kept);
        }
    }

    fn forget_checked(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = None;
        }
    }
}

/// `object.__setattr__` (and, with no value, `object.__delattr__`) on a tool.
fn generic_setattr(
    obj: &Bound<'_, PyTool>,
    name: &Bound<'_, PyAny>,
    value: *mut pyo3::ffi::PyObject,
) -> PyResult<()> {
    // SAFETY: both objects are alive for the call (borrowed above it); a null value deletes.
    let rc = unsafe { pyo3::ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value) };
    if rc < 0 {
        Err(PyErr::fetch(obj.py()))
    } else {
        Ok(())
    }
}

/// `Tool.run` and `Tool.arun` as found on the base class, to tell whether a subclass overrides them.
pub fn base_methods(py: Python<'_>) -> PyResult<&'static (Py<PyAny>, Py<PyAny>)> {
    static CELL: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();
    CELL.get_or_try_init(py, || {
        let base = py.get_type::<PyTool>();
        Ok((
            base.getattr("run")?.unbind(),
            base.getattr("arun")?.unbind(),
        ))
    })
}

/// Whether a Python tool decides confirmation as the base class does (`requires_confirmation`):
/// neither its class nor the object itself defines `needs_confirmation`. The pipeline then reads
/// the flag instead of calling the method, which costs a Python call on every admitted call.
pub fn confirms_by_flag(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    static BASE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = obj.py();
    let name = pyo3::intern!(py, "needs_confirmation");
    let base = BASE.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.get_type::<PyTool>().getattr(name)?.unbind())
    })?;
    if !obj.get_type().getattr(name)?.is(base) {
        return Ok(false);
    }
    // An attribute of the object itself would win over the class's method.
    let own = obj.getattr(pyo3::intern!(py, "__dict__"))?;
    Ok(!own
        .cast::<PyDict>()
        .map_or(Ok(true), |d| d.contains(name))?)
}

pub fn overrides<'py, N>(obj: &Bound<'py, PyAny>, method: N, base: &Py<PyAny>) -> PyResult<bool>
where
    N: IntoPyObject<'py, Target = pyo3::types::PyString>,
{
    Ok(!obj.get_type().getattr(method)?.is(base))
}

fn args_value(tool: &str, parameters: &Bound<'_, PyAny>) -> Result<Value, String> {
    if !parameters.is_instance_of::<PyDict>() {
        return Err(crate::executor::messages::not_an_object(tool));
    }
    py_to_value(parameters)
        .map_err(|e| crate::executor::messages::arguments_not_json(tool, &e.describe()))
}

/// `run` wrapped for a worker thread: a StopIteration escaping it becomes a RuntimeError.
/// asyncio cannot carry StopIteration through a Future (it fails inside a loop callback and the
/// awaiting task never wakes), so without this a sync tool raising it would hang `arun`; this is
/// the conversion PEP 479 makes for generators.
fn no_stop_iteration(run: Bound<'_, PyAny>) -> PyResult<Bound<'_, PyCFunction>> {
    let py = run.py();
    let run = run.unbind();
    PyCFunction::new_closure(
        py,
        Some(c"run"),
        None,
        move |args, kwargs| -> PyResult<Py<PyAny>> {
            let py = args.py();
            run.bind(py)
                .call(args, kwargs)
                .map(Bound::unbind)
                .map_err(|err| {
                    if err.is_instance_of::<PyStopIteration>(py) {
                        let converted = PyRuntimeError::new_err(format!(
                            "run() raised StopIteration: {}",
                            err.value(py)
                        ));
                        converted.set_cause(py, Some(err));
                        converted
                    } else {
                        err
                    }
                })
        },
    )
}

pub fn call_native(
    py: Python<'_>,
    tool: &Arc<dyn NativeTool>,
    args: &Value,
) -> PyResult<PyToolResponse> {
    // Releasing and re-taking the GIL costs more than a calculator evaluation; only tools that
    // may block (I/O, subprocesses) are worth letting other threads run meanwhile.
    let resp = if tool.blocks() {
        let tool = Arc::clone(tool);
        // Ctrl-C while an MCP call waits: the call is cancelled and KeyboardInterrupt raised.
        // (Python runs signal handlers on the main thread only; elsewhere this finds nothing.)
        let mut signal: Option<PyErr> = None;
        let resp = py.detach(|| {
            tool.call_interruptible(args, &mut || {
                Python::attach(|py| py.check_signals())
                    .map_err(|e| signal = Some(e))
                    .is_err()
            })
        });
        match resp {
            Some(resp) => resp,
            None => {
                return Err(signal.unwrap_or_else(|| {
                    pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted")
                }))
            }
        }
    } else {
        tool.call(args)
    };
    PyToolResponse::from_core(py, resp)
}

#[pymethods]
impl PyTool {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        PyTool {
            name: String::new(),
            description: String::new(),
            origin: BUILTIN_ORIGIN.to_string(),
            native: None,
            kept: Mutex::new(None),
        }
    }

    #[pyo3(signature = (name, description = String::new()))]
    fn __init__(&mut self, name: String, description: String) {
        self.name = name;
        self.description = description;
        self.forget_checked();
    }

    /// Any attribute set on a tool may change what a registration reads (a flag, its
    /// function, its isolation), so what an earlier registration kept is dropped first.
    fn __setattr__(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if let Ok(tool) = slf.try_borrow() {
            tool.forget_checked();
        }
        generic_setattr(slf, name, value.as_ptr())
    }

    fn __delattr__(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(tool) = slf.try_borrow() {
            tool.forget_checked();
        }
        generic_setattr(slf, name, std::ptr::null_mut())
    }

    /// Text an ``Agent`` adds to its system prompt while this tool is offered (a subclass or
    /// ``@tool(instructions=...)`` sets it; ``None``: nothing).
    #[classattr]
    fn instructions(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    #[classattr]
    fn requires_confirmation() -> bool {
        false
    }

    #[classattr]
    fn external_content() -> bool {
        false
    }

    #[classattr]
    fn supports_parallel() -> bool {
        false
    }

    /// True for a tool the agent should await (``arun``) even where it could call ``run``: an
    /// ``async def`` behind ``@tool``, or a subclass that says so. Defined on the base so that
    /// reading it on any tool finds a value instead of raising (and catching) an AttributeError
    /// on every call.
    #[classattr]
    fn is_async() -> bool {
        false
    }

    /// The registry's fast-call hook for `@tool` functions (see src/py/registry.rs). Defined on
    /// the base as None so looking it up on any other tool finds a value instead of raising
    /// (and catching) an AttributeError, which would dominate the cost of `register`.
    #[classattr]
    fn _fast_call(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// End the agent run right after this tool's result is recorded.
    #[classattr]
    fn stop_after_tool_call() -> bool {
        false
    }

    /// Per-call timeout in seconds, or None for the agent's default.
    #[classattr]
    fn timeout(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// The most characters of a result the model reads; a longer one is cut and marked
    /// partial. None follows the run's ``RunPolicy(max_result_chars=...)``.
    #[classattr]
    fn max_result_chars(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// Guardrails of this tool's calls (`agentmaker.agent.guardrails`), after the agent's
    /// and the run's.
    #[classattr]
    fn input_guardrails(py: Python<'_>) -> Py<PyAny> {
        pyo3::types::PyTuple::empty(py).into_any().unbind()
    }

    /// Guardrails of this tool's results, after the agent's and the run's.
    #[classattr]
    fn output_guardrails(py: Python<'_>) -> Py<PyAny> {
        pyo3::types::PyTuple::empty(py).into_any().unbind()
    }

    /// True when ``get_input_schema()`` returns the same schema for the tool's whole life (an
    /// ``@tool`` function's inferred one): the registry then checks it once, at the tool's
    /// first registration, and every later registry reuses that check. A subclass whose schema
    /// can change keeps the default, False: each registration reads and checks it anew.
    #[classattr]
    fn _fixed_schema() -> bool {
        false
    }

    /// Run in a worker process (`agentmaker.isolation`): True, an ``Isolation``, False, or
    /// None to follow the run's ``RunPolicy(isolate=...)``.
    #[classattr]
    fn isolate(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// An ``@tool`` function's spec (``FunctionTool`` sets its own); None for other tools.
    /// Declared here so that asking a tool for it never raises and catches an AttributeError,
    /// which costs more than the rest of a call's repair.
    #[classattr]
    fn _spec(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    /// What may be repaired in a call's arguments: ``"full"``, ``"coerce"``, ``"off"``, or
    /// None to follow the run's ``RunPolicy(repair=...)``.
    #[classattr]
    fn repair(py: Python<'_>) -> Py<PyAny> {
        py.None()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    #[setter]
    fn set_name(&mut self, name: String) {
        self.name = name;
        self.forget_checked();
    }

    #[getter]
    fn description(&self) -> &str {
        &self.description
    }

    #[setter]
    fn set_description(&mut self, description: String) {
        self.description = description;
        self.forget_checked();
    }

    /// Where the tool comes from: ``"builtin"`` or ``"mcp:{namespace}"``. Read-only.
    #[getter]
    fn origin(&self) -> &str {
        &self.origin
    }

    /// The parameters the model may pass. Override in subclasses.
    fn get_parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        if let Some(native) = &self.native {
            for p in &native.spec().parameters {
                let param = PyToolParameter {
                    name: p.name.clone(),
                    type_: p.type_.clone(),
                    description: p.description.clone(),
                    required: p.required,
                    default: match &p.default {
                        Some(v) => value_to_py(py, v)?.unbind(),
                        None => py.None(),
                    },
                    schema: match &p.schema {
                        Some(v) => value_to_py(py, v)?.unbind(),
                        None => py.None(),
                    },
                };
                list.append(Py::new(py, param)?)?;
            }
        }
        Ok(list)
    }

    /// A complete root JSON Schema that replaces the one built from ``get_parameters()``, or None.
    fn get_input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self
            .native
            .as_ref()
            .and_then(|n| n.spec().input_schema.clone())
        {
            Some(schema) => value_to_py(py, &schema),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// Whether this particular call must be confirmed. Defaults to ``requires_confirmation``.
    fn needs_confirmation(slf: &Bound<'_, Self>, parameters: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Some(native) = slf.borrow().native.clone() {
            // Unreadable arguments fail validation later; asking for confirmation is the safe side.
            return Ok(match args_value("", parameters) {
                Ok(args) => native.needs_confirmation(&args),
                Err(_) => true,
            });
        }
        slf.getattr("requires_confirmation")?.is_truthy()
    }

    /// Whether this call's result is external content to wrap. Defaults to ``external_content``.
    fn is_external_content(slf: &Bound<'_, Self>, parameters: &Bound<'_, PyAny>) -> PyResult<bool> {
        if let Some(native) = slf.borrow().native.clone() {
            return Ok(match args_value("", parameters) {
                Ok(args) => native.is_external_content(&args),
                Err(_) => true,
            });
        }
        slf.getattr("external_content")?.is_truthy()
    }

    /// Run the tool synchronously. Subclasses override this (or ``arun``).
    fn run(slf: &Bound<'_, Self>, parameters: &Bound<'_, PyAny>) -> PyResult<PyToolResponse> {
        let py = slf.py();
        let (name, native) = {
            let this = slf.borrow();
            (this.name.clone(), this.native.clone())
        };
        match native {
            Some(native) => match args_value(&name, parameters)
                .and_then(|args| native.check_direct_args(args))
            {
                Ok(args) => call_native(py, &native, &args),
                Err(text) => Ok(PyToolResponse::error_text(py, text)),
            },
            None => Err(PyNotImplementedError::new_err(format!(
                "Tool '{name}' does not implement run(); it is an async tool: call it through arun() or registry.aexecute_tool()"
            ))),
        }
    }

    /// Run the tool asynchronously; returns a coroutine. The default runs ``run`` on a worker
    /// thread, so a synchronous tool works unchanged in an async agent (a built-in that never
    /// blocks runs on the loop when the coroutine is awaited).
    fn arun<'py>(
        slf: &Bound<'py, Self>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let (name, native) = {
            let this = slf.borrow();
            (this.name.clone(), this.native.clone())
        };
        if let Some(native) = &native {
            if !native.blocks() {
                let args = PyTuple::new(py, [slf.getattr("run")?, parameters.clone()])?;
                return later(py, Later::Call, args);
            }
        } else if !overrides(slf.as_any(), "run", &base_methods(py)?.0)? {
            let err = PyNotImplementedError::new_err(format!(
                "Tool '{name}' implements neither run() nor arun(); override at least one"
            ));
            return later(py, Later::Raise, PyTuple::new(py, [err.into_value(py)])?);
        }
        let to_thread = py.import("asyncio")?.getattr("to_thread")?;
        to_thread.call1((no_stop_iteration(slf.getattr("run")?)?, parameters))
    }

    /// Build a tool from a typed function, exactly like ``@tool``.
    #[classmethod]
    #[pyo3(signature = (func, **kwargs))]
    fn from_callable<'py>(
        cls: &Bound<'py, pyo3::types::PyType>,
        func: &Bound<'py, PyAny>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        crate::py::hooks::hooks(py)?
            .from_callable
            .bind(py)
            .call((func,), kwargs)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let cls = slf.get_type().qualname()?.to_string();
        let this = slf.borrow();
        Ok(format!(
            "<{cls} name={:?} origin={:?}>",
            this.name, this.origin
        ))
    }
}

/// Raised by `register` for anything that is not a Tool instance.
pub fn not_a_tool(obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_default();
    let hint = if obj.is_callable() {
        "; to register a plain function use register_callable(func), or decorate it with @tool"
    } else {
        ""
    };
    crate::py::errors::definition(format!("expected a Tool (a Tool subclass instance, an @tool function or a built-in), got {ty}{hint}"),
    )
}
