//! Admission: the pipeline's gates 1-4 (or 1-5) over this registry, for every caller. The
//! agent's and the MCP server's calls (`CallPipeline.prepare`) and the program's direct calls
//! (`execute_tool`, `aexecute_tool`, `validate`) read their arguments, find their tool and pass
//! the core's gates ([`crate::executor`]) here, so they are refused with the same texts.

use super::{PyEntry, PyToolRegistry, Runner};
use crate::executor::arguments::{parse_arguments_with, RawArguments};
use crate::executor::{
    self, messages, CallStatus, CallTarget, Prepared, Refusal, RepairMode, Repairing, Settings,
};
use crate::py::convert::{py_to_value, value_to_py};
use crate::py::tool::{confirms_by_flag, PyTool};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::{Map, Value};
use std::cell::OnceCell;
use std::sync::Arc;

/// Which gates a call passes after its tool is found.
pub enum Gates<'a> {
    /// A direct call by the program: permissions (none) and validation ([`executor::admit`]).
    /// The program's own arguments are never read leniently: a JSON text must be strict JSON;
    /// values are still coerced to the schema where exactly one reading fits (unless the tool
    /// says `repair="off"`), as for a model's call.
    Direct,
    /// A model's call in a run: every gate up to the confirmation decision
    /// ([`executor::prepare`]), with what may be repaired in its arguments.
    Pipeline(&'a Settings<'a>, Repair),
}

/// What may be repaired in a model's call.
#[derive(Debug, Clone, Copy)]
pub struct Repair {
    /// The run's setting (`RunPolicy(repair=...)`), for tools that set none of their own.
    pub default: RepairMode,
    /// The reply ended at the model's token limit: arguments that end early are never
    /// completed.
    pub cut_off: bool,
}

/// A call that passed: its tool, its arguments as JSON and as the dict the tool receives, and,
/// for a model's call, what the gates decided.
pub struct Admitted<'py> {
    pub entry: Arc<PyEntry>,
    pub tool: Bound<'py, PyAny>,
    pub args: Value,
    /// The arguments as read, for the record of the call.
    pub read: Bound<'py, PyDict>,
    /// The arguments the tool receives (validation may have dropped nulls that mean "use the
    /// default").
    pub params: Bound<'py, PyDict>,
    pub prepared: Option<Prepared>,
    /// What was repaired in the arguments (reading them, then validating them), in order.
    pub repairs: Vec<String>,
}

/// A refused call: the refusal, the tool when it was found (its real name goes on the record)
/// and the arguments once they were read as an object.
pub struct Refused<'py> {
    pub refusal: Refusal,
    pub entry: Option<Arc<PyEntry>>,
    pub params: Option<Bound<'py, PyDict>>,
}

impl<'py> Refused<'py> {
    fn new(refusal: Refusal) -> Self {
        Refused {
            refusal,
            entry: None,
            params: None,
        }
    }
}

/// Gates 1-4 (or 1-5) for a call on `name` with `raw` arguments: a JSON text (the form models
/// send) or a dict, read as a JSON object; the tool found by real name, then wire name
/// (`unknown` words the refusal otherwise); then the core's gates.
pub fn admit_call<'py>(
    registry: Option<&PyToolRegistry>,
    name: &str,
    raw: &Bound<'py, PyAny>,
    gates: Gates<'_>,
    unknown: &dyn Fn(&str) -> String,
) -> PyResult<Result<Admitted<'py>, Refused<'py>>> {
    let py = raw.py();
    let (plain_dict, repair) = match gates {
        Gates::Direct => (false, None),
        Gates::Pipeline(_, repair) => (true, Some(repair)),
    };
    // Found first (once), though an unreadable call is refused before an unknown tool is.
    let found = registry.and_then(|r| r.entry_for_call(py, name));
    // Asked only for text that strict JSON refuses: the tool's own setting, else the run's.
    let mode = || match repair {
        Some(repair) => found
            .as_ref()
            .and_then(|e| own_repair_mode(e.payload.obj.bind(py)))
            .unwrap_or(repair.default),
        None => RepairMode::Off,
    };
    let cut_off = repair.is_some_and(|r| r.cut_off);
    let (map, params, repairs) = match arguments(name, raw, plain_dict, mode, cut_off)? {
        Ok(read) => read,
        Err(refusal) => return Ok(Err(Refused::new(refusal))),
    };
    let Some(entry) = found else {
        return Ok(Err(Refused {
            refusal: Refusal::new(CallStatus::UnknownTool, unknown(name)),
            entry: None,
            params: Some(params),
        }));
    };
    let tool = entry.payload.obj.bind(py).clone();
    let default = repair.map_or(RepairMode::Full, |r| r.default);
    let mut target = Target::new(&entry, tool, Value::Object(map), params.clone(), default);
    target.repairs = repairs;
    let passed = match gates {
        Gates::Direct => executor::admit(&mut target, None).map(|()| None),
        Gates::Pipeline(settings, _) => executor::prepare(&mut target, settings).map(Some),
    };
    let Target {
        tool,
        args,
        params: target_params,
        repairs,
        ..
    } = target;
    Ok(match passed {
        Ok(prepared) => Ok(Admitted {
            entry,
            tool,
            args,
            read: params,
            params: target_params,
            prepared,
            repairs,
        }),
        Err(refusal) => Err(Refused {
            refusal,
            entry: Some(entry),
            params: Some(params),
        }),
    })
}

/// The arguments as JSON (for validation), as the dict the tool receives, and the syntax
/// repairs made to read them.
type Arguments<'py> = (Map<String, Value>, Bound<'py, PyDict>, Vec<String>);

/// Gate 1's arguments: a JSON text holding an object (an empty text is no arguments), or a
/// dict; anything else is refused with the core's text. `plain_dict`: a dict subclass reaches
/// the tool as a plain dict, like one parsed from text would (a model's call); otherwise the
/// program's own dict reaches its tool as it is. `mode` is asked only when the text is not
/// strict JSON; `cut_off`: the reply ended at the model's token limit.
fn arguments<'py>(
    name: &str,
    raw: &Bound<'py, PyAny>,
    plain_dict: bool,
    mode: impl FnOnce() -> RepairMode,
    cut_off: bool,
) -> PyResult<Result<Arguments<'py>, Refusal>> {
    let py = raw.py();
    if let Ok(dict) = raw.cast::<PyDict>() {
        let dict = if !plain_dict || dict.is_exact_instance_of::<PyDict>() {
            dict.clone()
        } else {
            dict.copy()?
        };
        return Ok(match py_to_value(&dict) {
            Ok(Value::Object(map)) => Ok((map, dict, Vec::new())),
            Ok(_) => unreachable!("a dict converts to an object"),
            Err(e) => Err(Refusal::new(
                CallStatus::Invalid,
                messages::arguments_not_json(name, &e.describe()),
            )),
        });
    }
    let Ok(text) = raw.cast::<PyString>() else {
        return Ok(Err(Refusal::new(
            CallStatus::InvalidArgs,
            messages::not_an_object(name),
        )));
    };
    let text = text.to_string_lossy();
    Ok(
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
    )
}

/// The gates' view of a found tool and the call's arguments.
struct Target<'a, 'py> {
    entry: &'a PyEntry,
    tool: Bound<'py, PyAny>,
    /// Read only when permissions ask for it.
    origin: OnceCell<Option<String>>,
    args: Value,
    params: Bound<'py, PyDict>,
    /// The repair setting for a tool that has none of its own.
    repair: RepairMode,
    /// Every repair made to the arguments (reading them, then validating them).
    repairs: Vec<String>,
}

impl<'a, 'py> Target<'a, 'py> {
    fn new(
        entry: &'a PyEntry,
        tool: Bound<'py, PyAny>,
        args: Value,
        params: Bound<'py, PyDict>,
        repair: RepairMode,
    ) -> Self {
        Target {
            entry,
            tool,
            origin: OnceCell::new(),
            args,
            params,
            repair,
            repairs: Vec::new(),
        }
    }
}

/// A tool's own `repair` setting (`@tool(repair=...)`), if it has a valid one.
fn own_repair_mode(tool: &Bound<'_, PyAny>) -> Option<RepairMode> {
    let py = tool.py();
    let value = tool.getattr_opt(intern!(py, "repair")).ok().flatten()?;
    value.extract::<String>().ok()?.parse().ok()
}

/// What may change in a call of this tool: its own setting or `default`; and whether it is a
/// function (called with keyword arguments, or an `@tool` function's `FunctionTool`, which
/// has a `_spec`) that must receive an int for an integer parameter. A `Tool` subclass
/// receives valid arguments exactly as sent.
fn repairing(entry: &PyEntry, tool: &Bound<'_, PyAny>, default: RepairMode) -> Repairing {
    let py = tool.py();
    let function_tool = matches!(entry.payload.runner, Runner::Kwargs(_))
        || tool
            .getattr_opt(intern!(py, "_spec"))
            .ok()
            .flatten()
            .is_some_and(|spec| !spec.is_none());
    Repairing {
        mode: own_repair_mode(tool).unwrap_or(default),
        function_tool,
    }
}

/// An exception as the model reads it: `Type: message`.
pub fn exception_problem(py: Python<'_>, err: &PyErr) -> String {
    let exc = err.value(py);
    let msg = exc.str().map(|s| s.to_string()).unwrap_or_default();
    format!("{}: {msg}", super::type_name(exc))
}

impl CallTarget for Target<'_, '_> {
    fn name(&self) -> &str {
        self.entry.name()
    }

    fn origin(&self) -> Option<&str> {
        self.origin
            .get_or_init(|| {
                self.tool
                    .cast::<PyTool>()
                    .ok()
                    .map(|t| t.borrow().origin.clone())
            })
            .as_deref()
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
                Err(e) => return Err(messages::cannot_take_arguments(self.name(), &e.to_string())),
            }
        }
        Ok(())
    }

    fn needs_confirmation(&mut self) -> Result<bool, String> {
        let py = self.tool.py();
        let by_flag = !matches!(self.entry.payload.runner, Runner::Native(_))
            && confirms_by_flag(&self.tool).unwrap_or(false);
        let answer = if by_flag {
            self.tool.getattr(intern!(py, "requires_confirmation"))
        } else {
            self.tool
                .call_method1(intern!(py, "needs_confirmation"), (&self.params,))
        };
        answer
            .and_then(|v| v.is_truthy())
            .map_err(|e| exception_problem(py, &e))
    }

    fn timeout(&self) -> Option<f64> {
        super::own_timeout(&self.tool)
    }

    fn supports_parallel(&self) -> bool {
        let py = self.tool.py();
        self.tool
            .getattr(intern!(py, "supports_parallel"))
            .and_then(|v| v.is_truthy())
            .unwrap_or(false)
    }
}
