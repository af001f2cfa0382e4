//! Reading a Python tool object into a registry entry: what `register` checks and keeps.

use super::render::Forms;
use crate::executor::Kind;
use crate::py::convert::py_to_value;
use crate::py::errors::definition;
use crate::py::tool::{base_methods, not_a_tool, overrides, PyTool};
use crate::registry::{CheckedTool, Entry};
use crate::tool::{NameRule, NativeTool, ToolSpec};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyString};
use serde_json::Value;
use std::sync::Arc;

/// How a registered tool is run on the sync path.
pub enum Runner {
    /// A Rust built-in: called directly with the GIL released.
    Native(Arc<dyn NativeTool>),
    /// A Tool subclass: `run(parameters)`; the result must be a ToolResponse or a str.
    Run,
    /// An `@tool` function whose arguments need no conversion (boxed: most tools are not).
    Kwargs(Box<KwargsCall>),
    /// A tool that only implements `arun`.
    AsyncOnly,
}

/// `func(**kwargs)` called straight from Rust, the result converted like any `@tool` result.
pub struct KwargsCall {
    pub func: Py<PyAny>,
    pub names: Vec<Py<PyString>>,
    /// `null_default[i]`: a null for `names[i]` means "use the function's default", so the key
    /// is left out of the call.
    pub null_default: Vec<bool>,
    /// `integral[i]`: the schema says `integer`, so an integral float such as `3.0` (valid
    /// JSON Schema integer) reaches the function as the int `3`, as its annotation promises.
    pub integral: Vec<bool>,
    /// An `async def`: awaited on the async path; the blocking path runs the tool's `run`.
    pub is_async: bool,
}

impl KwargsCall {
    /// The keyword arguments for `func` from a validated call's parameters.
    pub fn kwargs<'py>(&self, params: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        let py = params.py();
        let kwargs = PyDict::new(py);
        for ((key, drop_null), integral) in self
            .names
            .iter()
            .zip(&self.null_default)
            .zip(&self.integral)
        {
            if let Some(v) = params.get_item(key.bind(py))? {
                if *drop_null && v.is_none() {
                    continue;
                }
                match v.cast::<PyFloat>() {
                    // Validation already accepted it as an integer, so it is integral.
                    Ok(f) if *integral && f.value().abs() < 9.0e15 => {
                        kwargs.set_item(key.bind(py), f.value() as i64)?
                    }
                    _ => kwargs.set_item(key.bind(py), v)?,
                }
            }
        }
        Ok(kwargs)
    }
}

/// What a registry keeps of a tool: the object, and what was read from it.
pub struct Payload {
    pub obj: Py<PyAny>,
    pub parts: Arc<Parts>,
}

/// What registration reads from a tool besides its description: shared by every registry a
/// tool with a fixed schema joins (see [`Kept`]).
pub struct Parts {
    pub runner: Runner,
    /// The provider renderings, converted to Python on first use and then shared.
    pub forms: Forms,
    /// Whether the name goes on the wire as it is (otherwise it is rendered under a wire name).
    pub wire_safe: bool,
    /// Whether the tool runs in a worker process.
    pub isolate: super::isolate::Isolate,
    /// A fixed schema's Python form (an `@tool` function's inferred dict), which its OpenAI
    /// rendering holds as it is: one owner, no converted copy.
    pub schema: Option<Py<PyAny>>,
}

impl std::ops::Deref for Payload {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.parts
    }
}

/// What the first registration of a tool with a fixed schema (`_fixed_schema`: an `@tool`
/// function) read and checked, kept on the tool (`PyTool::kept`) so that every later
/// registration only checks the name against its registry's rule and stores a reference. Any
/// attribute set on the tool, and a new name or description, drops it (`Tool.__setattr__`).
#[derive(Clone)]
pub struct Kept {
    pub checked: Arc<CheckedTool>,
    pub parts: Arc<Parts>,
}

pub type PyEntry = Entry<Payload>;

fn bool_attr(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> PyResult<bool> {
    obj.getattr(name)?.is_truthy()
}

/// `Tool.get_input_schema` as found on the base class: a tool whose class keeps it returns
/// None, so it is not called.
fn base_input_schema(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CELL.get_or_try_init(py, || {
        let base = py.get_type::<PyTool>();
        Ok(base.getattr(intern!(py, "get_input_schema"))?.unbind())
    })
}

/// What an earlier registration of `obj` kept, ready to store (see [`Kept`]): None for a tool
/// registered for the first time, or changed since.
pub fn kept_payload(obj: &Bound<'_, PyAny>) -> Option<(Arc<CheckedTool>, Payload)> {
    let kept = obj.cast::<PyTool>().ok()?.borrow().kept()?;
    let payload = Payload {
        obj: obj.clone().unbind(),
        parts: kept.parts,
    };
    Some((kept.checked, payload))
}

/// Reads everything the registry needs from a Python tool object. Registration is on the
/// Tool-RAG path (thousands of tools): attribute names are interned and base-class methods
/// that a tool keeps are not called.
pub fn prepare(obj: &Bound<'_, PyAny>, rule: NameRule) -> PyResult<PyEntry> {
    let py = obj.py();
    let Ok(tool) = obj.cast::<PyTool>() else {
        return Err(not_a_tool(obj));
    };
    if let Some((checked, payload)) = kept_payload(obj) {
        return Ok(Entry::from_checked(rule, checked, payload)?);
    }
    // `origin` is the root of trust for permissions: a class attribute or property that shows
    // another value than the stamped one is an attempt to forge it. Read as permissions read it.
    let shown_obj = obj.getattr(intern!(py, "origin"))?;
    let shown = shown_obj
        .cast::<PyString>()
        .ok()
        .and_then(|s| s.to_str().ok());
    let (name, description, native, forged) = {
        let t = tool.borrow();
        (
            t.name.clone(),
            t.description.clone(),
            t.native.clone(),
            (shown != Some(t.origin.as_str())).then(|| t.origin.clone()),
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
        return Err(definition(format!("tool of class {} has no name: call super().__init__(name, description) in its __init__", cls()),
        ));
    }
    if let Some(origin) = forged {
        let shown = match shown {
            Some(s) => s.to_string(),
            None => match shown_obj.extract::<String>() {
                Ok(s) => s,
                Err(_) => shown_obj.repr().map(|r| r.to_string()).unwrap_or_default(),
            },
        };
        return Err(definition(format!("tool '{name}' (class {}) overrides origin with {shown:?}; origin is stamped by the framework ({origin:?}) and cannot be set by a tool", cls()),
        ));
    }
    let mut spec = ToolSpec::new(name.clone(), description, Vec::new());
    // Read now so that a flag property that raises fails registration, not a later call.
    spec.requires_confirmation = bool_attr(obj, intern!(py, "requires_confirmation"))?;
    spec.external_content = bool_attr(obj, intern!(py, "external_content"))?;
    spec.supports_parallel = bool_attr(obj, intern!(py, "supports_parallel"))?;

    let methods = base_methods(py)?;
    let has_run = overrides(obj, intern!(py, "run"), &methods.0)?;
    if let Some(native) = native.filter(|_| !has_run) {
        // Built-ins describe themselves in Rust; no Python round trip needed.
        let nspec = native.spec();
        spec.parameters = nspec.parameters.clone();
        spec.input_schema = nspec.input_schema.clone();
        let checked = Arc::new(CheckedTool::check(rule, spec)?);
        return build_entry(checked, obj, Runner::Native(native), rule);
    }

    let (checked, schema) = read_checked(obj, spec, rule)?;
    let checked = Arc::new(checked);
    let runner = read_runner(obj, &checked, has_run, &methods.1, cls)?;
    let fixed = bool_attr(obj, intern!(py, "_fixed_schema"))?;
    let mut entry = build_entry(checked, obj, runner, rule)?;
    // A fixed schema is kept with what was read, for the tool's next registrations, and its
    // Python form is the one its renderings hold (see `render.rs`).
    if fixed {
        if let Some(parts) = Arc::get_mut(&mut entry.payload.parts) {
            parts.schema = schema
                .filter(|s| s.is_instance_of::<PyDict>())
                .map(Bound::unbind);
        }
        tool.borrow().keep(Kept {
            checked: Arc::clone(entry.checked()),
            parts: Arc::clone(&entry.payload.parts),
        });
    }
    Ok(entry)
}

/// Reads the tool's schema (`get_input_schema()`, else `get_parameters()`) into `spec` and
/// checks it.
fn read_checked<'py>(
    obj: &Bound<'py, PyAny>,
    mut spec: ToolSpec,
    rule: NameRule,
) -> PyResult<(CheckedTool, Option<Bound<'py, PyAny>>)> {
    let py = obj.py();
    let name = spec.name.clone();
    let schema = if overrides(obj, intern!(py, "get_input_schema"), base_input_schema(py)?)? {
        obj.call_method0(intern!(py, "get_input_schema"))?
    } else {
        py.None().into_bound(py)
    };
    if schema.is_none() {
        let params = obj.call_method0(intern!(py, "get_parameters"))?;
        spec.parameters.reserve_exact(params.len().unwrap_or(0));
        let iter = params.try_iter().map_err(|_| {
            definition(format!(
                "get_parameters() of tool '{name}' must return a list of ToolParameter"
            ))
        })?;
        for item in iter {
            let item = item?;
            let Ok(param) = item.cast::<crate::py::parameter::PyToolParameter>() else {
                let ty = item.get_type().qualname()?.to_string();
                return Err(definition(format!("get_parameters() of tool '{name}' returned a {ty}; every item must be a ToolParameter"),
                ));
            };
            spec.parameters.push(param.borrow().to_core(py, &name)?);
        }
    } else {
        let value = py_to_value(&schema).map_err(|e| {
            definition(format!(
                "get_input_schema() of tool '{name}' returned something that is not JSON: {}",
                e.describe()
            ))
        })?;
        spec.input_schema = Some(value);
    }
    let given = (!schema.is_none()).then_some(schema);
    Ok((CheckedTool::check(rule, spec)?, given))
}

/// How a tool object is run: its `_fast_call`, else `run`, else `arun`.
fn read_runner(
    obj: &Bound<'_, PyAny>,
    checked: &CheckedTool,
    has_run: bool,
    base_arun: &Py<PyAny>,
    cls: impl Fn() -> String,
) -> PyResult<Runner> {
    let py = obj.py();
    let name = checked.name();
    let fast = obj.getattr_opt(intern!(py, "_fast_call"))?;
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
            let integral = checked.with_schema(|schema| {
                let props = schema.get("properties");
                names
                    .iter()
                    .map(|n| props.and_then(|p| p.get(n)).is_some_and(is_integer_schema))
                    .collect()
            });
            Runner::Kwargs(Box::new(KwargsCall {
                func,
                names: names
                    .iter()
                    .map(|n| PyString::intern(py, n).unbind())
                    .collect(),
                null_default,
                integral,
                is_async: bool_attr(obj, intern!(py, "is_async"))?,
            }))
        }
        None => {
            if has_run {
                Runner::Run
            } else if overrides(obj, intern!(py, "arun"), base_arun)? {
                Runner::AsyncOnly
            } else {
                return Err(definition(format!("tool '{name}' (class {}) implements neither run() nor arun(); override at least one", cls()),
                ));
            }
        }
    };
    Ok(runner)
}

fn build_entry(
    checked: Arc<CheckedTool>,
    obj: &Bound<'_, PyAny>,
    runner: Runner,
    rule: NameRule,
) -> PyResult<PyEntry> {
    let isolate = super::isolate::read_isolate(obj, checked.name(), &runner)?;
    let payload = Payload {
        obj: obj.clone().unbind(),
        parts: Arc::new(Parts {
            runner,
            forms: Forms::default(),
            wire_safe: crate::tool::is_wire_safe(checked.name()),
            isolate,
            schema: None,
        }),
    };
    Ok(Entry::from_checked(rule, checked, payload)?)
}

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

/// How a registered tool runs (see [`Kind`]); an isolated one is `Dual`. A Python tool with
/// both `run` and `arun` counts as async when its `is_async` attribute is true (an `async def`
/// wrapped by `@tool`).
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
