//! Reading one tool call as the model sent it (an OpenAI-shaped dict, or an SDK object with
//! the same attributes), and the call once its tool is found: the gates' view of it.

use crate::executor::arguments::{check_call, parse_arguments_with, RawArguments};
use crate::executor::{CallTarget, Kind, Refusal, RepairMode, Repairing};
use crate::py::convert::{py_to_value, value_to_py};
use crate::py::registry::type_name;
use crate::py::registry::{PyEntry, Runner};
use crate::py::tool::PyTool;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a call carried, read once.
pub struct ReadCall<'py> {
    /// The id the transcript uses: the model's, or a made-up one when it sent none.
    pub id: Bound<'py, PyAny>,
    /// The function name as sent (a str), or an empty str.
    pub name: Bound<'py, PyString>,
    /// The raw arguments as sent.
    pub raw: Bound<'py, PyAny>,
    /// The call as the assistant message records it: the model's own dict when it is well
    /// formed, otherwise one rebuilt so every tool message answers an id that appears in it.
    pub wire: Bound<'py, PyAny>,
    /// Gate 1's verdict on the id and the name.
    pub checked: Result<(), Refusal>,
}

fn item<'py>(
    obj: &Bound<'py, PyAny>,
    key: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.cast::<PyDict>() {
        Ok(d) => d.get_item(key),
        Err(_) => obj.getattr_opt(key),
    }
}

/// Reads call number `index` of turn `turn`.
pub fn read_call<'py>(
    call: &Bound<'py, PyAny>,
    index: usize,
    turn: usize,
) -> PyResult<ReadCall<'py>> {
    let py = call.py();
    let id = item(call, intern!(py, "id"))?;
    let func = item(call, intern!(py, "function"))?.filter(|f| !f.is_none());
    let (name, raw) = match &func {
        Some(f) => (
            item(f, intern!(py, "name"))?,
            item(f, intern!(py, "arguments"))?,
        ),
        None => (None, None),
    };
    let raw = raw.unwrap_or_else(|| py.None().into_bound(py));
    let name = match name.as_ref().and_then(|n| n.cast::<PyString>().ok()) {
        Some(n) => n.clone(),
        None => PyString::new(py, ""),
    };
    let id_text = id
        .as_ref()
        .and_then(|i| i.cast::<PyString>().ok())
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty());
    let name_text = name.to_string_lossy();
    let checked = check_call(id_text.as_deref(), Some(&name_text));
    let good_id = id_text.is_some();
    let id = match id.filter(|_| good_id) {
        Some(id) => id,
        None => PyString::new(py, &format!("call_missing_id_t{turn}_{index}")).into_any(),
    };
    let raw_is_text = raw.is_none() || raw.is_instance_of::<PyString>();
    let own_dict = call.is_instance_of::<PyDict>()
        && func.as_ref().is_some_and(|f| f.is_instance_of::<PyDict>());
    let wire = if good_id && own_dict && raw_is_text {
        call.clone()
    } else {
        let arguments = if raw.is_none() {
            PyString::new(py, "").into_any()
        } else if raw_is_text {
            raw.clone()
        } else {
            let text = match py_to_value(&raw) {
                Ok(v) => serde_json::to_string(&v).unwrap_or_default(),
                Err(_) => raw.repr().map(|r| r.to_string()).unwrap_or_default(),
            };
            PyString::new(py, &text).into_any()
        };
        let function = PyDict::new(py);
        function.set_item("name", &name)?;
        function.set_item("arguments", arguments)?;
        let rebuilt = PyDict::new(py);
        rebuilt.set_item("id", &id)?;
        rebuilt.set_item("type", "function")?;
        rebuilt.set_item("function", function)?;
        rebuilt.into_any()
    };
    Ok(ReadCall {
        id,
        name,
        raw,
        wire,
        checked,
    })
}

/// The arguments as JSON (for validation), as the dict the tool receives, and the syntax
/// repairs made to read them.
pub type Arguments<'py> = (Map<String, Value>, Bound<'py, PyDict>, Vec<String>);

/// The call's arguments, or the refusal when they are not a JSON object. `mode` is asked only
/// when the text is not strict JSON; `cut_off`: the reply ended at the model's token limit.
pub fn arguments<'py>(
    name: &str,
    raw: &Bound<'py, PyAny>,
    mode: impl FnOnce() -> RepairMode,
    cut_off: bool,
) -> PyResult<Result<Arguments<'py>, Refusal>> {
    let py = raw.py();
    if raw.is_none() {
        return Ok(Ok((Map::new(), PyDict::new(py), Vec::new())));
    }
    if let Ok(text) = raw.cast::<PyString>() {
        let text = text.to_string_lossy();
        return Ok(
            match parse_arguments_with(name, RawArguments::Text(&text), mode, cut_off) {
                Ok((map, repairs)) => {
                    let value = Value::Object(map);
                    let dict = value_to_py(py, &value)?.cast_into::<PyDict>()?;
                    let Value::Object(map) = value else {
                        unreachable!("parsed as an object")
                    };
                    Ok((map, dict, repairs))
                }
                Err(refusal) => Err(refusal),
            },
        );
    }
    let Ok(dict) = raw.cast::<PyDict>() else {
        return Ok(Err(Refusal::new(
            crate::executor::CallStatus::InvalidArgs,
            crate::executor::messages::not_an_object(name),
        )));
    };
    // A dict subclass reaches the tool as a plain dict, like one parsed from text would.
    let dict = if dict.is_exact_instance_of::<PyDict>() {
        dict.clone()
    } else {
        dict.copy()?
    };
    Ok(match py_to_value(&dict) {
        Ok(Value::Object(map)) => Ok((map, dict, Vec::new())),
        Ok(_) => unreachable!("a dict converts to an object"),
        Err(e) => Err(Refusal::new(
            crate::executor::CallStatus::Invalid,
            format!(
                "Error: tool '{name}' failed parameter validation: the arguments are not JSON: {}",
                e.describe()
            ),
        )),
    })
}

/// A call that passed the gates, kept on its record until it is run: its entry, its arguments
/// in both forms, and whether it has started and finished. Whoever finishes a call first
/// (the tool's return or its timeout) writes the record; the other is dropped.
#[pyclass(module = "agentmaker._native", name = "PreparedCall", frozen)]
pub struct PyPreparedCall {
    pub entry: Arc<PyEntry>,
    pub args: Value,
    pub params: Py<PyDict>,
    pub kind: Kind,
    /// The worker settings when the call runs isolated.
    pub isolation: Option<Py<PyAny>>,
    started: AtomicBool,
    done: AtomicBool,
    in_batch: AtomicBool,
}

impl PyPreparedCall {
    pub fn new(
        entry: Arc<PyEntry>,
        args: Value,
        params: Py<PyDict>,
        kind: Kind,
        isolation: Option<Py<PyAny>>,
    ) -> Self {
        PyPreparedCall {
            entry,
            args,
            params,
            kind,
            isolation,
            started: AtomicBool::new(false),
            done: AtomicBool::new(false),
            in_batch: AtomicBool::new(false),
        }
    }

    /// Marks the call started; true the first time (so a run counts each execution once).
    pub fn start(&self) -> bool {
        !self.started.swap(true, Ordering::AcqRel)
    }

    /// Marks the call finished; true for the first outcome, which is the one that counts.
    pub fn finish(&self) -> bool {
        !self.done.swap(true, Ordering::AcqRel)
    }

    /// Whether the call runs in a batch beside others (set when the response is planned).
    pub fn in_batch(&self) -> bool {
        self.in_batch.load(Ordering::Relaxed)
    }

    pub fn set_in_batch(&self, yes: bool) {
        self.in_batch.store(yes, Ordering::Relaxed);
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

#[pymethods]
impl PyPreparedCall {
    fn __repr__(&self) -> String {
        format!(
            "PreparedCall({:?}, kind={:?})",
            self.entry.name(),
            self.kind.as_str()
        )
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.params)?;
        if let Some(i) = &self.isolation {
            visit.call(i)?;
        }
        Ok(())
    }
}

/// How a registered tool runs (see [`Kind`]); an isolated one is `Dual`. A Python tool with both `run` and `arun` counts
/// as async when its `is_async` attribute is true (an `async def` wrapped by `@tool`).
pub fn kind_of(py: Python<'_>, entry: &PyEntry, isolated: bool) -> Kind {
    if isolated {
        // Blocking when called synchronously, awaited without a thread otherwise.
        return Kind::Dual;
    }
    match &entry.payload.runner {
        Runner::Native(native) if !native.blocks() => Kind::Inline,
        Runner::Native(native) if native.awaitable() => Kind::Dual,
        Runner::Native(_) => Kind::Sync,
        Runner::AsyncOnly => Kind::Async,
        Runner::Kwargs(call) if call.is_async => Kind::Async,
        Runner::Kwargs(_) => Kind::Sync,
        Runner::Run => {
            let obj = entry.payload.obj.bind(py);
            let is_async = obj.getattr_opt(intern!(py, "is_async")).ok().flatten();
            if is_async.is_some_and(|v| v.is_truthy().unwrap_or(false)) {
                Kind::Async
            } else {
                Kind::Sync
            }
        }
    }
}

/// The gates' view of a found tool and the call's arguments.
pub struct Target<'a, 'py> {
    pub entry: &'a PyEntry,
    pub tool: Bound<'py, PyAny>,
    pub origin: Option<String>,
    pub args: Value,
    pub params: Bound<'py, PyDict>,
    /// The run's repair setting, for a tool that has none of its own.
    pub repair: RepairMode,
    /// Every repair made to the arguments (reading them, then validating them).
    pub repairs: Vec<String>,
}

/// A tool's own `repair` setting (`@tool(repair=...)`), if it has a valid one.
pub fn own_repair_mode(tool: &Bound<'_, PyAny>) -> Option<RepairMode> {
    let py = tool.py();
    let value = tool.getattr_opt(intern!(py, "repair")).ok().flatten()?;
    value.extract::<String>().ok()?.parse().ok()
}

/// What may change in a call of this tool: its own setting or `default`; and whether it is a
/// function (called with keyword arguments, or an `@tool` function's `FunctionTool`, which
/// has a `_spec`) that must receive an int for an integer parameter. A `Tool` subclass
/// receives valid arguments exactly as sent.
pub fn repairing(entry: &PyEntry, tool: &Bound<'_, PyAny>, default: RepairMode) -> Repairing {
    let py = tool.py();
    let function_tool = matches!(entry.payload.runner, Runner::Kwargs(_))
        || tool
            .getattr_opt(intern!(py, "_spec"))
            .ok()
            .flatten()
            .is_some();
    Repairing {
        mode: own_repair_mode(tool).unwrap_or(default),
        function_tool,
    }
}

impl<'a, 'py> Target<'a, 'py> {
    pub fn new(
        entry: &'a PyEntry,
        tool: Bound<'py, PyAny>,
        args: Value,
        params: Bound<'py, PyDict>,
        repair: RepairMode,
        repairs: Vec<String>,
    ) -> Self {
        let origin = tool
            .cast::<PyTool>()
            .ok()
            .map(|t| t.borrow().origin.clone());
        Target {
            entry,
            tool,
            origin,
            args,
            params,
            repair,
            repairs,
        }
    }
}

pub fn exception_problem(py: Python<'_>, err: &PyErr) -> String {
    let exc = err.value(py);
    let msg = exc.str().map(|s| s.to_string()).unwrap_or_default();
    format!("{}: {msg}", type_name(exc))
}

impl CallTarget for Target<'_, '_> {
    fn name(&self) -> &str {
        self.entry.name()
    }

    fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    fn validate(&mut self) -> Result<(), String> {
        let (entry, tool, default) = (self.entry, &self.tool, self.repair);
        let how = || repairing(entry, tool, default);
        if self
            .entry
            .check_args_with(&mut self.args, how, &mut self.repairs)?
        {
            // Repaired (or nulls meaning "use the default" dropped): the tool gets the result.
            let py = self.tool.py();
            match value_to_py(py, &self.args).and_then(|d| Ok(d.cast_into::<PyDict>()?)) {
                Ok(dict) => self.params = dict,
                Err(e) => {
                    return Err(format!(
                        "Error: tool '{}' could not take its arguments: {e}",
                        self.name()
                    ))
                }
            }
        }
        Ok(())
    }

    fn needs_confirmation(&mut self) -> Result<bool, String> {
        let py = self.tool.py();
        self.tool
            .call_method1(intern!(py, "needs_confirmation"), (&self.params,))
            .and_then(|v| v.is_truthy())
            .map_err(|e| exception_problem(py, &e))
    }

    fn timeout(&self) -> Option<f64> {
        let py = self.tool.py();
        let t = self
            .tool
            .getattr_opt(intern!(py, "timeout"))
            .ok()
            .flatten()?;
        if t.is_none() {
            return None;
        }
        t.extract::<f64>().ok()
    }

    fn supports_parallel(&self) -> bool {
        let py = self.tool.py();
        self.tool
            .getattr(intern!(py, "supports_parallel"))
            .and_then(|v| v.is_truthy())
            .unwrap_or(false)
    }
}
