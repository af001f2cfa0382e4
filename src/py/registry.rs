//! `ToolRegistry` for Python: the core registry holding Python tool objects and Rust built-ins.
//!
//! The hot path (`execute_tool`) does one lookup, one JSON conversion of the arguments, one
//! validation with the validator compiled at registration, and one call. Renderings are cached
//! per registry version; each tool's OpenAI dict is built once and shared, so treat the dicts
//! returned by `to_openai_schema()` as read-only (copy before mutating).

use crate::py::convert::{py_to_value, value_to_py};
use crate::py::errors::{flow_control_class, registration, tool_registration_error};
use crate::py::mcp::PyMcpTool;
use crate::py::response::PyToolResponse;
use crate::py::tool::{base_methods, call_native, not_a_tool, overrides, PyTool};
use crate::registry::{ConflictMode, Entry, Registry};
use crate::tool::{NativeTool, ToolSpec};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::sync::{MutexExt, RwLockExt};
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// How a registered tool is run on the sync path.
pub enum Runner {
    /// A Rust built-in: called directly with the GIL released.
    Native(Arc<dyn NativeTool>),
    /// A Tool subclass: `run(parameters)`; the result must be a ToolResponse or a str.
    Run,
    /// An `@tool` function whose arguments need no conversion: `func(**kwargs)` called straight
    /// from Rust, the result converted like any `@tool` result. `null_default[i]`: a null for
    /// `names[i]` means "use the function's default", so the key is left out of the call.
    Kwargs {
        func: Py<PyAny>,
        names: Vec<Py<PyString>>,
        null_default: Vec<bool>,
        /// `integral[i]`: the schema says `integer`, so an integral float such as `3.0` (valid
        /// JSON Schema integer) reaches the function as the int `3`, as its annotation promises.
        integral: Vec<bool>,
    },
    /// A tool that only implements `arun`.
    AsyncOnly,
}

pub struct Payload {
    pub obj: Py<PyAny>,
    pub runner: Runner,
    /// The OpenAI dict, converted to Python on first use and then shared.
    openai_py: PyOnceLock<Py<PyAny>>,
}

type PyEntry = Entry<Payload>;

/// A call that passed lookup and validation (the entry, the arguments as JSON and, when
/// validation dropped nulls meaning "use the default", the pruned arguments as a new dict for
/// the tool), or the error response for the model.
type Admission = Result<(Arc<PyEntry>, Value, Option<Py<PyAny>>), Py<PyToolResponse>>;

struct Rendered {
    version: u64,
    openai: Vec<Py<PyAny>>,
    index: HashMap<String, usize>,
    description: Py<PyString>,
    catalog: Py<PyString>,
}

#[pyclass(module = "agentmaker._native", name = "ToolRegistry", subclass, frozen)]
pub struct PyToolRegistry {
    inner: RwLock<Registry<Payload>>,
    rendered: Mutex<Option<Arc<Rendered>>>,
}

fn bool_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<bool> {
    obj.getattr(name)?.is_truthy()
}

/// Reads everything the registry needs from a Python tool object.
fn prepare(obj: &Bound<'_, PyAny>) -> PyResult<PyEntry> {
    let py = obj.py();
    let Ok(tool) = obj.cast::<PyTool>() else {
        return Err(not_a_tool(obj));
    };
    let (name, description, origin, native) = {
        let t = tool.borrow();
        (
            t.name.clone(),
            t.description.clone(),
            t.origin.clone(),
            t.native.clone(),
        )
    };
    // The class name only appears in error messages: computed when one is raised.
    let cls = || {
        obj.get_type()
            .qualname()
            .map(|n| n.to_string())
            .unwrap_or_default()
    };
    if name.is_empty() {
        return Err(tool_registration_error(
            py,
            format!("tool of class {} has no name: call super().__init__(name, description) in its __init__", cls()),
        ));
    }
    // `origin` is the root of trust for permissions: a class attribute or property that shows
    // another value than the stamped one is an attempt to forge it.
    let shown_obj = obj.getattr("origin")?;
    let shown: String = match shown_obj.extract() {
        Ok(s) => s,
        Err(_) => shown_obj.repr().map(|r| r.to_string()).unwrap_or_default(),
    };
    if shown != origin {
        return Err(tool_registration_error(
            py,
            format!("tool '{name}' (class {}) overrides origin with {shown:?}; origin is stamped by the framework ({origin:?}) and cannot be set by a tool", cls()),
        ));
    }
    let mut spec = ToolSpec::new(name.clone(), description, Vec::new());
    spec.requires_confirmation = bool_attr(obj, "requires_confirmation")?;
    spec.external_content = bool_attr(obj, "external_content")?;
    spec.supports_parallel = bool_attr(obj, "supports_parallel")?;

    let methods = base_methods(py)?;
    let runs_natively = native.is_some() && !overrides(obj, "run", &methods.0)?;
    if runs_natively {
        // Built-ins describe themselves in Rust; no Python round trip needed.
        let native = native.expect("checked above");
        let nspec = native.spec();
        spec.parameters = nspec.parameters.clone();
        spec.input_schema = nspec.input_schema.clone();
        return build_entry(py, spec, obj, Runner::Native(native));
    }

    let schema = obj.call_method0("get_input_schema")?;
    if schema.is_none() {
        let params = obj.call_method0("get_parameters")?;
        let iter = params.try_iter().map_err(|_| {
            tool_registration_error(
                py,
                format!("get_parameters() of tool '{name}' must return a list of ToolParameter"),
            )
        })?;
        for item in iter {
            let item = item?;
            let Ok(param) = item.cast::<crate::py::parameter::PyToolParameter>() else {
                let ty = item.get_type().qualname()?.to_string();
                return Err(tool_registration_error(
                    py,
                    format!("get_parameters() of tool '{name}' returned a {ty}; every item must be a ToolParameter"),
                ));
            };
            spec.parameters.push(param.borrow().to_core(py, &name)?);
        }
    } else {
        let value = py_to_value(&schema).map_err(|e| {
            tool_registration_error(
                py,
                format!(
                    "get_input_schema() of tool '{name}' returned something that is not JSON: {}",
                    e.describe()
                ),
            )
        })?;
        spec.input_schema = Some(value);
    }

    let fast = obj.getattr_opt("_fast_call")?;
    let runner = match fast.filter(|f| !f.is_none()) {
        Some(fast) => {
            // (func, names) or (func, names, names whose null means "use the default")
            let (func, names, nulls): (Py<PyAny>, Vec<String>, Vec<String>) = match fast.extract() {
                Ok(triple) => triple,
                Err(_) => {
                    let (func, names): (Py<PyAny>, Vec<String>) = fast.extract()?;
                    (func, names, Vec::new())
                }
            };
            let null_default = names.iter().map(|n| nulls.contains(n)).collect();
            let props = spec.input_schema.as_ref().and_then(|s| s.get("properties"));
            let integral = names
                .iter()
                .map(|n| props.and_then(|p| p.get(n)).is_some_and(is_integer_schema))
                .collect();
            Runner::Kwargs {
                func,
                names: names
                    .iter()
                    .map(|n| PyString::intern(py, n).unbind())
                    .collect(),
                null_default,
                integral,
            }
        }
        None => {
            let has_run = overrides(obj, "run", &methods.0)?;
            let has_arun = overrides(obj, "arun", &methods.1)?;
            match (has_run, has_arun) {
                (true, _) => Runner::Run,
                (false, true) => Runner::AsyncOnly,
                (false, false) => {
                    return Err(tool_registration_error(
                        py,
                        format!("tool '{name}' (class {}) implements neither run() nor arun(); override at least one", cls()),
                    ))
                }
            }
        }
    };
    build_entry(py, spec, obj, runner)
}

fn build_entry(
    py: Python<'_>,
    spec: ToolSpec,
    obj: &Bound<'_, PyAny>,
    runner: Runner,
) -> PyResult<PyEntry> {
    let payload = Payload {
        obj: obj.clone().unbind(),
        runner,
        openai_py: PyOnceLock::new(),
    };
    Registry::prepare(spec, payload).map_err(|e| registration(py, e))
}

fn error_response(py: Python<'_>, text: String) -> PyResult<Py<PyToolResponse>> {
    Py::new(py, PyToolResponse::error_text(py, text))
}

/// The class name as the model sees it in error texts: `__name__`, like the reference's
/// `{ExcType}`; a `__qualname__` would leak `func.<locals>.` paths of the host program.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// Turns an exception raised by a tool into an error response. Flow-control signals for the
/// Agent loop and non-`Exception` errors (KeyboardInterrupt, SystemExit) propagate.
const MAX_EXCEPTION_CHARS: usize = 2000;

/// The entry's tool as an MCP tool, if it is one.
fn mcp_tool<'py>(py: Python<'py>, entry: &PyEntry) -> Option<Bound<'py, PyMcpTool>> {
    entry.payload.obj.bind(py).cast::<PyMcpTool>().ok().cloned()
}

pub fn exception_response(py: Python<'_>, tool: &str, err: PyErr) -> PyResult<Py<PyToolResponse>> {
    let exc = err.value(py);
    if exc.is_instance(flow_control_class(py)?.bind(py))?
        || !exc.is_instance_of::<pyo3::exceptions::PyException>()
    {
        return Err(err);
    }
    let ty = type_name(exc);
    let msg = exc.str().map(|s| s.to_string()).unwrap_or_default();
    // The model needs the gist; a tool that puts a whole payload into its exception must not
    // flood the context (the full text stays in the logged traceback).
    let msg = crate::validation::truncate(&msg, MAX_EXCEPTION_CHARS);
    let text = if msg.is_empty() {
        format!("Error: tool '{tool}' raised during execution: {ty}")
    } else {
        format!("Error: tool '{tool}' raised during execution: {ty}: {msg}")
    };
    log_tool_exception(py, tool, &err, &text);
    error_response(py, text)
}

/// The model gets the one-line error; the developer gets the traceback: a WARNING with
/// `exc_info` on the `agentmaker.tools` logger (a child of `agentmaker`). Flow-control signals
/// never get here.
fn log_tool_exception(py: Python<'_>, tool: &str, err: &PyErr, told: &str) {
    static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let logger = LOGGER.get_or_try_init(py, || {
        py.import("logging")?
            .getattr("getLogger")?
            .call1(("agentmaker.tools",))
            .map(Bound::unbind)
    });
    if let Ok(logger) = logger {
        let exc = err.value(py);
        // The traceback travels beside the exception in a PyErr: put it back on the exception,
        // so the log record (and anyone holding the exception) sees where the tool failed.
        if let Some(tb) = err.traceback(py) {
            if exc.getattr("__traceback__").is_ok_and(|t| t.is_none()) {
                let _ = exc.setattr("__traceback__", tb);
            }
        }
        let kwargs = PyDict::new(py);
        let _ = kwargs.set_item("exc_info", exc);
        let _ = logger.bind(py).call_method(
            "warning",
            (
                "tool %r raised an exception; the model was told: %s",
                tool,
                told,
            ),
            Some(&kwargs),
        );
    }
}

/// Wraps what a Tool subclass's `run` returned: a ToolResponse, or a str as a success.
pub fn wrap_run_result(
    py: Python<'_>,
    tool: &str,
    result: Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    if let Ok(resp) = result.cast::<PyToolResponse>() {
        return Ok(resp.clone().unbind());
    }
    if let Ok(s) = result.cast::<PyString>() {
        return Py::new(
            py,
            PyToolResponse::new_py(
                py,
                s.to_str()?.to_owned(),
                crate::response::ToolStatus::Success,
                None,
            ),
        );
    }
    error_response(
        py,
        format!("Error: tool '{tool}' returned a {} instead of a ToolResponse (or str); this is a bug in the tool", type_name(&result)),
    )
}

/// Wraps what an `@tool` function returned: str and ToolResponse as they are, None as an
/// empty success, JSON values as compact JSON text with the value kept in `data`, and anything
/// else through `agentmaker._results.result_to_response` (dataclasses, pydantic models, Enums
/// ... or an error response naming a type that has no JSON form). The one owner of these rules:
/// Python reaches it through `_tool_result`.
pub fn wrap_callable_result(
    py: Python<'_>,
    tool: &str,
    result: Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    if result.is_instance_of::<PyToolResponse>() || result.is_instance_of::<PyString>() {
        return wrap_run_result(py, tool, result);
    }
    if result.is_none() {
        return Py::new(
            py,
            PyToolResponse::new_py(
                py,
                String::new(),
                crate::response::ToolStatus::Success,
                None,
            ),
        );
    }
    if let Ok(value) = py_to_value(&result) {
        let text = serde_json::to_string(&value).unwrap_or_default();
        return Py::new(
            py,
            PyToolResponse::new_py(
                py,
                text,
                crate::response::ToolStatus::Success,
                Some(result.unbind()),
            ),
        );
    }
    static CONVERT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let convert = CONVERT.get_or_try_init(py, || {
        py.import("agentmaker._results")?
            .getattr("result_to_response")
            .map(Bound::unbind)
    })?;
    let converted = convert.bind(py).call1((tool, result))?;
    wrap_run_result(py, tool, converted)
}

/// `_native._tool_result(tool, value)`: a tool function's return value as its ToolResponse
/// (the rules of [`wrap_callable_result`]), for the callable tools run from Python.
#[pyfunction]
pub fn _tool_result(
    py: Python<'_>,
    tool: &str,
    value: Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    wrap_callable_result(py, tool, value)
}

/// Runs a tool whose arguments passed `admit`, and wraps the result.
/// `{"type": "integer"}` or `{"type": ["integer", "null"]}`.
fn is_integer_schema(prop: &Value) -> bool {
    match prop.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
        }
        _ => false,
    }
}

fn run_admitted(
    py: Python<'_>,
    name: &str,
    entry: &PyEntry,
    args: &Value,
    parameters: &Bound<'_, PyAny>,
) -> PyResult<Py<PyToolResponse>> {
    let obj = entry.payload.obj.bind(py);
    match &entry.payload.runner {
        Runner::Native(native) => Py::new(py, call_native(py, native, args)?),
        Runner::Run => match obj.call_method1(pyo3::intern!(py, "run"), (parameters,)) {
            Ok(result) => wrap_run_result(py, name, result),
            Err(err) => exception_response(py, name, err),
        },
        Runner::Kwargs { func, names, null_default, integral } => {
            let params = parameters.cast::<PyDict>()?;
            let kwargs = PyDict::new(py);
            for ((key, drop_null), integral) in names.iter().zip(null_default).zip(integral) {
                if let Some(v) = params.get_item(key.bind(py))? {
                    if *drop_null && v.is_none() {
                        continue;
                    }
                    match v.cast::<pyo3::types::PyFloat>() {
                        // Validation already accepted it as an integer, so it is integral.
                        Ok(f) if *integral && f.value().abs() < 9.0e15 => kwargs.set_item(key.bind(py), f.value() as i64)?,
                        _ => kwargs.set_item(key.bind(py), v)?,
                    }
                }
            }
            match func.bind(py).call((), Some(&kwargs)) {
                Ok(result) => wrap_callable_result(py, name, result),
                Err(err) => exception_response(py, name, err),
            }
        }
        Runner::AsyncOnly => error_response(
            py,
            format!("Error: tool '{name}' is async-only; it must be run through the async entry point (aexecute_tool / Agent.arun)"),
        ),
    }
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

    fn unknown(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyToolResponse>> {
        let text = self.read(py).unknown_tool_message(name, &|_| true);
        error_response(py, text)
    }

    /// Lookup, argument conversion and validation: the checks every path runs before a tool.
    /// The name comes from the model too: one that is not a str, or a str that is not UTF-8 (a
    /// lone surrogate, which a JSON `\ud800` escape produces), is an error response, not an
    /// exception.
    fn admit(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        parameters: &Bound<'_, PyAny>,
    ) -> PyResult<Admission> {
        let Ok(name) = name.cast::<PyString>() else {
            let text = format!(
                "Error: the tool name must be a string, got {}",
                type_name(name)
            );
            return Ok(Err(error_response(py, text)?));
        };
        let name = match name.to_str() {
            Ok(n) => std::borrow::Cow::Borrowed(n),
            Err(_) => name.to_string_lossy(),
        };
        let name = name.as_ref();
        let Some(entry) = self.entry(py, name) else {
            return Ok(Err(self.unknown(py, name)?));
        };
        if !parameters.is_instance_of::<PyDict>() {
            return Ok(Err(error_response(
                py,
                format!(
                    "Error: tool '{name}' expects its arguments as a JSON object, got {}",
                    type_name(parameters)
                ),
            )?));
        }
        let mut args = match py_to_value(parameters) {
            Ok(v) => v,
            Err(e) => {
                return Ok(Err(error_response(
                    py,
                    format!("Error: tool '{name}' failed parameter validation: the arguments are not JSON: {}", e.describe()),
                )?))
            }
        };
        let pruned = match entry.check_args(&mut args) {
            Ok(false) => None,
            Ok(true) => Some(value_to_py(py, &args)?.unbind()),
            Err(text) => return Ok(Err(error_response(py, text)?)),
        };
        Ok(Ok((entry, args, pruned)))
    }

    fn rendered<R>(&self, py: Python<'_>, f: impl FnOnce(&Rendered) -> R) -> PyResult<R> {
        let current = self.read(py).version();
        let cached = self
            .rendered
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(r) = cached.filter(|r| r.version == current) {
            return Ok(f(&r));
        }
        // Snapshot under the read lock (plain Rust), build the Python objects with no lock held:
        // the first conversion of an entry's dict initialises a `PyOnceLock`, which detaches.
        let (version, entries, description, catalog) = {
            let reg = self.read(py);
            let entries: Vec<Arc<PyEntry>> = reg.entries().cloned().collect();
            (
                reg.version(),
                entries,
                reg.tools_description::<&str>(None),
                reg.catalog::<&str>(None),
            )
        };
        let mut openai = Vec::with_capacity(entries.len());
        let mut index = HashMap::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let dict = entry
                .payload
                .openai_py
                .get_or_try_init(py, || openai_py(py, entry).map(Bound::unbind))?;
            openai.push(dict.clone_ref(py));
            index.insert(entry.spec.name.clone(), i);
        }
        let fresh = Arc::new(Rendered {
            version,
            openai,
            index,
            description: PyString::new(py, &description).unbind(),
            catalog: PyString::new(py, &catalog).unbind(),
        });
        let stale = {
            let mut cache = self
                .rendered
                .lock_py_attached(py)
                .unwrap_or_else(PoisonError::into_inner);
            if cache.as_ref().is_some_and(|c| c.version > version) {
                None
            } else {
                cache.replace(Arc::clone(&fresh))
            }
        };
        drop(stale);
        drop(entries);
        Ok(f(&fresh))
    }
}

/// The OpenAI `tools` entry as a Python dict, built straight from the root schema.
fn openai_py<'py>(py: Python<'py>, entry: &PyEntry) -> PyResult<Bound<'py, PyAny>> {
    let function = PyDict::new(py);
    function.set_item(pyo3::intern!(py, "name"), &entry.spec.name)?;
    function.set_item(pyo3::intern!(py, "description"), &entry.spec.description)?;
    function.set_item(
        pyo3::intern!(py, "parameters"),
        value_to_py(py, &entry.schema)?,
    )?;
    let tool = PyDict::new(py);
    tool.set_item(pyo3::intern!(py, "type"), pyo3::intern!(py, "function"))?;
    tool.set_item(pyo3::intern!(py, "function"), function)?;
    Ok(tool.into_any())
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
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        PyToolRegistry {
            inner: RwLock::new(Registry::new()),
            rendered: Mutex::new(None),
        }
    }

    /// Register one tool. A duplicate name raises ToolRegistrationError unless ``overwrite=True``
    /// (the replaced tool keeps its position).
    #[pyo3(signature = (tool, overwrite = false))]
    fn register(&self, py: Python<'_>, tool: &Bound<'_, PyAny>, overwrite: bool) -> PyResult<()> {
        let entry = prepare(tool)?;
        let replaced = self.replaced(py, std::iter::once(entry.spec.name.clone()));
        let result = self.write(py).register(entry, overwrite);
        drop(replaced);
        result.map_err(|e| registration(py, e))
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
        let mode: ConflictMode = on_conflict.parse().map_err(|e| registration(py, e))?;
        let iter = tools.try_iter().map_err(|_| {
            tool_registration_error(
                py,
                format!(
                    "register_all() expects an iterable of tools, got {}",
                    type_name(tools)
                ),
            )
        })?;
        let mut entries = Vec::new();
        for tool in iter {
            entries.push(prepare(&tool?)?);
        }
        let replaced = self.replaced(py, entries.iter().map(|e| e.spec.name.clone()));
        let result = self.write(py).register_all(entries, mode);
        drop(replaced);
        result.map_err(|e| registration(py, e))
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

    /// The tool registered under ``name``, or None.
    fn get(&self, py: Python<'_>, name: &str) -> Option<Py<PyAny>> {
        self.entry(py, name).map(|e| e.payload.obj.clone_ref(py))
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
            .map(|e| value_to_py(py, &e.schema))
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
            None => self.rendered(py, |r| r.catalog.clone_ref(py)),
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
            None => self.rendered(py, |r| r.description.clone_ref(py)),
            Some(names) => {
                let text = self.read(py).tools_description(Some(&names));
                Ok(PyString::new(py, &text).unbind())
            }
        }
    }

    /// The ``tools`` argument for OpenAI-style function calling. ``names`` selects a subset in
    /// that order (duplicates and unknown names are dropped). The dicts are shared between calls.
    #[pyo3(signature = (names = None))]
    fn _openai_tools<'py>(
        &self,
        py: Python<'py>,
        names: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let names = names_arg(names)?;
        self.rendered(py, |r| match names {
            None => PyList::new(py, r.openai.iter().map(|d| d.bind(py))),
            Some(names) => {
                let mut seen = std::collections::HashSet::new();
                let picked = names
                    .iter()
                    .filter(|n| seen.insert(n.as_str()))
                    .filter_map(|n| r.index.get(n))
                    .map(|&i| r.openai[i].bind(py));
                PyList::new(py, picked)
            }
        })?
    }

    /// Validate arguments for a tool without running it: an error ToolResponse, or None when
    /// the call may proceed (used to validate before asking a person to confirm).
    fn validate(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        parameters: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyToolResponse>>> {
        Ok(self.admit(py, name, parameters)?.err())
    }

    /// Run a tool: look it up, validate the arguments against its schema, run it and wrap the
    /// result. Bad model input and exceptions raised by the tool come back as error responses.
    fn execute_tool(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        parameters: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyToolResponse>> {
        match self.admit(py, name, parameters)? {
            Ok((entry, args, pruned)) => {
                let params = pruned.as_ref().map_or(parameters, |p| p.bind(py));
                run_admitted(py, &entry.spec.name, &entry, &args, params)
            }
            Err(resp) => Ok(resp),
        }
    }

    /// ``execute_tool`` that also says whether the tool was entered: ``(response, executed)``.
    /// The Agent uses it to count only calls that really ran (not unknown or invalid ones).
    fn _execute_checked(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        parameters: &Bound<'_, PyAny>,
    ) -> PyResult<(Py<PyToolResponse>, bool)> {
        match self.admit(py, name, parameters)? {
            Ok((entry, args, pruned)) => {
                let params = pruned.as_ref().map_or(parameters, |p| p.bind(py));
                Ok((
                    run_admitted(py, &entry.spec.name, &entry, &args, params)?,
                    true,
                ))
            }
            Err(resp) => Ok((resp, false)),
        }
    }

    /// The tool and how the Agent should run it, or None for an unknown name. The kind is
    /// ``"inline"`` (a Rust built-in that never blocks), ``"sync"`` (may block: inline on the
    /// sync path, a worker thread on the async path), ``"dual"`` (a Rust tool that blocks when
    /// called synchronously and has a thread-free ``arun``: an MCP tool; inline for a lone call
    /// on the sync path, awaited otherwise) or ``"async"`` (only ``arun``: awaited).
    /// A Python tool with both ``run`` and ``arun`` counts as async when its ``is_async``
    /// attribute is true (an ``async def`` wrapped by ``@tool``).
    fn _lookup(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> Option<(Py<PyAny>, &'static str)> {
        let entry = self.entry(py, name.cast::<PyString>().ok()?.to_str().ok()?)?;
        let obj = entry.payload.obj.bind(py);
        let kind = match &entry.payload.runner {
            Runner::Native(native) if !native.blocks() => "inline",
            // Blocking when called synchronously, awaitable without a thread when not.
            Runner::Native(native) if native.awaitable() => "dual",
            Runner::Native(_) => "sync",
            Runner::AsyncOnly => "async",
            Runner::Run | Runner::Kwargs { .. } => {
                let is_async = obj
                    .getattr_opt(pyo3::intern!(py, "is_async"))
                    .ok()
                    .flatten();
                if is_async.is_some_and(|v| v.is_truthy().unwrap_or(false)) {
                    "async"
                } else {
                    "sync"
                }
            }
        };
        Some((obj.clone().unbind(), kind))
    }

    /// For the async path: an error ToolResponse, or ``(tool, kind, parameters)``: the tool
    /// object to await ``arun(parameters)`` on, its kind for :meth:`_wrap`, and the arguments to
    /// pass (the caller's dict, or a pruned copy when validation dropped nulls that mean "use
    /// the default"), or, for an MCP tool, its call already sent: an awaitable resolving to the
    /// ToolResponse. (Rust built-ins that never block are run right
    /// here; the Agent runs those inline and never asks.)
    fn _admit<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyAny>,
        parameters: &Bound<'py, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let (entry, args, pruned) = match self.admit(py, name, parameters)? {
            Ok(ok) => ok,
            Err(resp) => return Ok(resp.into_any()),
        };
        if let Runner::Native(native) = &entry.payload.runner {
            if !native.blocks() {
                return Ok(Py::new(py, call_native(py, native, &args)?)?.into_any());
            }
            // An MCP tool starts its call here, with the arguments just converted for
            // validation (`arun` would convert them again): the caller awaits what it gets.
            if native.awaitable() {
                if let Some(mcp) = mcp_tool(py, &entry) {
                    return Ok(mcp.get().start(py, args)?.unbind());
                }
            }
        }
        let kind = match entry.payload.runner {
            Runner::Kwargs { .. } => "callable",
            _ => "tool",
        };
        let params = pruned.unwrap_or_else(|| parameters.clone().unbind());
        Ok((entry.payload.obj.clone_ref(py), kind, params)
            .into_pyobject(py)?
            .into_any()
            .unbind())
    }

    /// Wraps a value returned by ``arun``: ``kind`` is ``"tool"`` or ``"callable"``.
    fn _wrap(
        &self,
        py: Python<'_>,
        name: &str,
        kind: &str,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyToolResponse>> {
        if kind == "callable" {
            wrap_callable_result(py, name, result.clone())
        } else {
            wrap_run_result(py, name, result.clone())
        }
    }

    /// Converts an exception raised by a tool into an error response (re-raises flow control).
    fn _exception(
        &self,
        py: Python<'_>,
        name: &str,
        exc: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyToolResponse>> {
        exception_response(py, name, PyErr::from_value(exc.clone()))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(reg) = self.inner.try_read() {
            for entry in reg.entries() {
                visit.call(&entry.payload.obj)?;
                if let Runner::Kwargs { func, .. } = &entry.payload.runner {
                    visit.call(func)?;
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
