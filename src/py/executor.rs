//! `CallPipeline`: one run's tool calls through the core pipeline ([`crate::executor`]).
//!
//! Python enters here once per model response (`prepare`, which reads every call and runs
//! gates 1-5 on each) and once per call to run it: `run` for a call that runs on a thread
//! (the caller's or a worker), `start` for one awaited on the event loop (then the
//! [`PyStartedCall`]'s `finish`/`fail`). Each fills the call's `ToolCallRecord`. What stays in
//! Python is what only Python can host: the tool's callable, a person's confirmation, worker
//! threads and asyncio (`agentmaker.agent.tool_calls`).

mod approval;
mod call;
mod completion;
mod guarded;
mod record;
mod result_flags;

use crate::executor::approval::{ApprovalRules, Refusals};
use crate::executor::{
    self, messages, CallStatus, Finished, Outcome, RepairMode, ResultFlags, Settings, Slot,
};
use crate::guard::Guard;
use crate::permissions::ToolPermissions;
use crate::py::permissions::PyToolPermissions;
use crate::py::registry::{
    admit_call, exception_problem, kind_of, run_admitted, start_awaitable, Gates, PyStartedCall,
    PyToolRegistry, Repair, Runner,
};
use crate::tool::RUN_KEY;
use call::{read_call, PyPreparedCall};
use completion::RecordCompletion;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use record::{prepared_call, record_class, status_word};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// An admitted call's planning facts: whether it may run in parallel, its kind, its timeout.
type Admitted = (bool, executor::Kind, Option<f64>, Py<PyPreparedCall>);
/// A group of calls for Python: `(start, end, batch)`.
type GroupBounds = (usize, usize, bool);

#[pyclass(module = "agentmaker._native", name = "CallPipeline", frozen)]
pub struct PyCallPipeline {
    registry: Option<Py<PyToolRegistry>>,
    permissions: Option<ToolPermissions>,
    default_timeout: Option<f64>,
    serial: bool,
    blocking_run: bool,
    /// The run's guard, made when the first external result arrives.
    guard: OnceLock<Guard>,
    /// Calls that were started (refused ones never are).
    executed: AtomicUsize,
    /// The tool names an unknown-tool answer may reveal (registered and permitted).
    visible: OnceLock<Vec<String>>,
    /// `RunPolicy(isolate=...)`: the worker settings for Python tools that set none.
    isolate: Option<Py<PyAny>>,
    /// `RunPolicy(repair=...)`: what may be repaired in calls to tools that set nothing.
    repair: RepairMode,
    /// `RunPolicy(max_result_chars=...)`: the limit for tools that set none.
    max_result_chars: Option<usize>,
    /// The agent's `Approval` rules and limit, and the person's refusals so far.
    approval: ApprovalRules,
    refusals: Refusals,
    /// The run has output guardrails: returned results wait for them (see `guarded`).
    hold_results: bool,
    /// The run's id, for tools that keep state per run (`NativeTool::keeps_run_state`).
    run_id: Option<String>,
}

impl PyCallPipeline {
    fn settings(&self) -> Settings<'_> {
        Settings {
            permissions: self.permissions.as_ref(),
            default_timeout: self.default_timeout,
            serial: self.serial,
        }
    }

    fn unknown_text(&self, py: Python<'_>, name: &str) -> String {
        let visible = self.visible.get_or_init(|| match &self.registry {
            None => Vec::new(),
            Some(reg) => reg.get().names_where(py, &|entry, origin| {
                self.permissions
                    .as_ref()
                    .is_none_or(|p| p.is_allowed(entry.name(), origin))
            }),
        });
        let names: Vec<&str> = visible.iter().map(String::as_str).collect();
        messages::unknown_tool(name, &names)
    }

    /// Reads call `index` and runs gates 1-5 on it. Returns the record and, for an admitted
    /// call, whether it may run in parallel.
    fn prepare_one<'py>(
        &self,
        py: Python<'py>,
        raw_call: &Bound<'py, PyAny>,
        index: usize,
        turn: usize,
        cut_off: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Option<Admitted>)> {
        let read = read_call(raw_call, index, turn)?;
        let sent_name = read.name.clone().into_any();
        if let Err(refusal) = read.checked.clone() {
            return Ok((
                record::refused(py, &read, &sent_name, &read.raw, refusal)?,
                None,
            ));
        }
        let name = read.name.to_string_lossy().into_owned();
        // Arguments left out are no arguments.
        let raw = if read.raw.is_none() {
            PyString::new(py, "").into_any()
        } else {
            read.raw.clone()
        };
        let settings = self.settings();
        let registry = self.registry.as_ref().map(|r| r.get());
        let unknown = |n: &str| self.unknown_text(py, n);
        let repair = Repair {
            default: self.repair,
            cut_off,
        };
        let gates = Gates::Pipeline(&settings, repair);
        let admitted = match admit_call(registry, &name, &raw, gates, &unknown)? {
            Ok(admitted) => admitted,
            Err(refused) => {
                let shown = match &refused.entry {
                    Some(entry) => PyString::new(py, entry.name()).into_any(),
                    None => sent_name,
                };
                let arguments = match refused.params {
                    Some(dict) => dict.into_any(),
                    None => read.raw.clone(),
                };
                return Ok((
                    record::refused(py, &read, &shown, &arguments, refused.refusal)?,
                    None,
                ));
            }
        };
        let entry = admitted.entry;
        let prepared = admitted
            .prepared
            .expect("a pipeline admission passes every gate");
        let real = PyString::new(py, entry.name()).into_any();
        let tool = admitted.tool;
        // The record shows the arguments as the model sent them, or, once repaired, those the
        // tool receives; the tool gets `params`, which validation may have pruned.
        let (args, params, repairs) = (admitted.args, admitted.params, admitted.repairs);
        let shown_args = if repairs.is_empty() {
            admitted.read
        } else {
            params.clone()
        };
        let noted = (!repairs.is_empty())
            .then(|| PyList::new(py, &repairs))
            .transpose()?;
        let mut args = args;
        if let (Some(run), Runner::Native(native)) = (&self.run_id, &entry.payload.runner) {
            // Added after the record's and the guardrails' copies were made: only the tool sees it.
            if let (true, Value::Object(map)) = (native.keeps_run_state(), &mut args) {
                map.insert(RUN_KEY.to_string(), Value::String(run.clone()));
            }
        }
        let isolation = entry.isolation(py, self.isolate.as_ref());
        let kind = kind_of(py, &entry, isolation.is_some());
        let call = Py::new(
            py,
            PyPreparedCall::new(
                Arc::clone(&entry),
                args,
                params.clone().unbind(),
                kind,
                isolation,
            ),
        )?;
        let record = record_class(py)?.call1((
            &read.id,
            real,
            shown_args,
            py.None(),
            "",
            &read.wire,
            tool,
            params,
            prepared.confirm,
            prepared.timeout,
            py.None(),
            call.clone_ref(py),
        ))?;
        if let Some(noted) = noted {
            record.setattr(intern!(py, "repairs"), noted)?;
        }
        Ok((
            record,
            Some((prepared.parallel, kind, prepared.timeout, call)),
        ))
    }

    fn enter(&self, call: &PyPreparedCall) {
        if call.start() {
            self.executed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Fills the record with a finished call's status and text (unless it already has an
    /// outcome: a call that timed out keeps its timeout).
    fn write(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        call: &PyPreparedCall,
        outcome: Outcome,
        data: Option<Bound<'_, PyAny>>,
        elapsed: f64,
    ) -> PyResult<()> {
        if !call.finish() {
            return Ok(());
        }
        let name = call.entry.name();
        let outcome = match outcome {
            Outcome::Returned { text, status } if self.holds(py, call) => {
                return self.hold(py, record, (text, status), data, elapsed);
            }
            other => other,
        };
        let flags = if matches!(outcome, Outcome::Returned { .. } | Outcome::WrongType(_)) {
            self.result_flags(py, call)
        } else {
            ResultFlags::default()
        };
        let Finished { status, text, stop } = executor::finish(name, outcome, flags, || {
            self.guard.get_or_init(Guard::random)
        });
        let text = record::with_repair_note(record, text, status);
        record.setattr(intern!(py, "status"), status_word(py, status))?;
        record.setattr(intern!(py, "output"), text)?;
        record.setattr(intern!(py, "duration"), elapsed)?;
        record.setattr(intern!(py, "executed"), true)?;
        if let Some(data) = data {
            record.setattr(intern!(py, "data"), data)?;
        }
        if let Some(stop) = stop {
            record.setattr(intern!(py, "_stop"), stop)?;
        }
        Ok(())
    }
}

#[pymethods]
impl PyCallPipeline {
    /// One run's pipeline. `blocking_run`: the run was started by the blocking `Agent.run`;
    /// `serial`: the run has a numeric cap, so every call runs alone; `repair`: `"full"`,
    /// `"coerce"` or `"off"`, for tools that set none of their own.
    #[new]
    #[pyo3(signature = (registry, permissions = None, tool_timeout = None, serial = false, blocking_run = false, isolate = None, repair = "full", max_result_chars = None, approval_rules = Vec::new(), max_attempts = None, hold_results = false, run_id = None))]
    fn new(
        registry: Option<Bound<'_, PyAny>>,
        permissions: Option<Bound<'_, PyToolPermissions>>,
        tool_timeout: Option<f64>,
        serial: bool,
        blocking_run: bool,
        isolate: Option<Bound<'_, PyAny>>,
        repair: &str,
        max_result_chars: Option<usize>,
        approval_rules: Vec<(String, bool)>,
        max_attempts: Option<u32>,
        hold_results: bool,
        run_id: Option<String>,
    ) -> PyResult<Self> {
        let repair: RepairMode = repair
            .parse()
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        // False (or None) means no default; True or an Isolation is the default's settings.
        let isolate = match isolate {
            Some(i) if i.is_truthy()? => Some(i.unbind()),
            _ => None,
        };
        let registry = match registry.filter(|r| !r.is_none()) {
            None => None,
            Some(r) => Some(
                r.cast_into::<PyToolRegistry>()
                    .map_err(|e| {
                        pyo3::exceptions::PyTypeError::new_err(format!(
                            "the agent's tool_registry must be a ToolRegistry: {e}"
                        ))
                    })?
                    .unbind(),
            ),
        };
        Ok(PyCallPipeline {
            registry,
            permissions: permissions.map(|p| p.get().core.clone()),
            default_timeout: tool_timeout,
            serial,
            blocking_run,
            guard: OnceLock::new(),
            executed: AtomicUsize::new(0),
            visible: OnceLock::new(),
            isolate,
            repair,
            max_result_chars,
            approval: ApprovalRules::new(approval_rules, max_attempts),
            refusals: Refusals::default(),
            hold_results,
            run_id,
        })
    }

    /// Reads one response's tool calls and runs gates 1-5 on each: the records, in order, and
    /// the groups they run in: `(start, end, batch)`, where a batch runs its admitted calls
    /// together and any other group runs its calls one after the other. Each admitted record's `_route` says where it runs (`inline`, `thread`, `await`).
    /// `cut_off`: the response ended at the model's token limit (`finish_reason` "length"), so
    /// arguments that end early are never completed.
    #[pyo3(signature = (calls, turn, cut_off = false))]
    fn prepare<'py>(
        &self,
        py: Python<'py>,
        calls: &Bound<'py, PyAny>,
        turn: usize,
        cut_off: bool,
    ) -> PyResult<(Bound<'py, PyList>, Vec<GroupBounds>)> {
        let calls: Vec<Bound<'py, PyAny>> = if let Ok(list) = calls.cast::<PyList>() {
            list.iter().collect() // no length hint to ask, no iterator object
        } else if calls.is_instance_of::<PyTuple>() {
            calls.try_iter()?.collect::<PyResult<_>>()?
        } else {
            vec![calls.clone()]
        };
        let mut records = Vec::with_capacity(calls.len());
        let mut admitted = Vec::with_capacity(calls.len());
        for (i, c) in calls.iter().enumerate() {
            let (record, info) = self.prepare_one(py, c, i, turn, cut_off)?;
            records.push(record);
            admitted.push(info);
        }
        let slots: Vec<Slot> = admitted
            .iter()
            .map(|a| match a {
                None => Slot::Refused,
                Some((true, ..)) => Slot::Parallel,
                Some((false, ..)) => Slot::Alone,
            })
            .collect();
        let groups = executor::groups(&slots);
        for g in &groups {
            for i in g.calls.clone() {
                if let Some((_, kind, timeout, call)) = &admitted[i] {
                    call.get().set_in_batch(g.batch);
                    let route = executor::route(*kind, self.blocking_run, g.batch, *timeout);
                    records[i].setattr(intern!(py, "_route"), record::route_word(py, route))?;
                }
            }
        }
        let groups = groups
            .into_iter()
            .map(|g| (g.calls.start, g.calls.end, g.batch))
            .collect();
        Ok((PyList::new(py, records)?, groups))
    }

    /// Runs an admitted call on this thread and fills its record. A call whose record already
    /// has an outcome (it timed out before a worker took it) is not run at all.
    fn run(&self, py: Python<'_>, record: &Bound<'_, PyAny>) -> PyResult<()> {
        let call = prepared_call(record)?;
        let call = call.get();
        if call.is_done() {
            return Ok(());
        }
        self.enter(call);
        let started = Instant::now();
        let entry = &call.entry;
        // An isolated call runs inline only without a timeout (see `executor::route`).
        let isolated = call.isolation.as_ref().map(|i| (i, None));
        let result = run_admitted(
            py,
            entry.name(),
            entry,
            &call.args,
            call.params.bind(py).as_any(),
            isolated,
        );
        let elapsed = started.elapsed().as_secs_f64();
        match result {
            Ok(resp) => self.complete_response(py, record, call, resp.bind(py), elapsed),
            Err(err) => self.complete_error(py, record, call, err, elapsed),
        }
    }

    /// Starts an admitted call to be awaited: a `StartedCall`, or None when the start itself
    /// failed (the record then holds the error).
    fn start(slf: &Bound<'_, Self>, record: &Bound<'_, PyAny>) -> PyResult<Option<PyStartedCall>> {
        let py = slf.py();
        let this = slf.get();
        let call_obj = prepared_call(record)?;
        let call = call_obj.get();
        this.enter(call);
        let started = Instant::now();
        let params = call.params.bind(py);
        match start_awaitable(
            py,
            &call.entry,
            &call.args,
            params.as_any(),
            call.isolation.as_ref(),
        ) {
            Ok(awaitable) => Ok(Some(PyStartedCall::new(
                &call.entry,
                awaitable.unbind(),
                call.isolation.is_some(),
                Some(Box::new(RecordCompletion {
                    pipeline: slf.clone().unbind(),
                    record: record.clone().unbind(),
                    call: call_obj.clone().unbind(),
                    started,
                })),
            ))),
            Err(err) => {
                this.complete_error(py, record, call, err, started.elapsed().as_secs_f64())?;
                Ok(None)
            }
        }
    }

    /// Sets a call's timeout (the run's deadline shortened it) and the route that goes with it.
    fn set_timeout(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        timeout: Option<f64>,
    ) -> PyResult<()> {
        let call = prepared_call(record)?;
        let call = call.get();
        let route = executor::route(call.kind, self.blocking_run, call.in_batch(), timeout);
        record.setattr(intern!(py, "_timeout"), timeout)?;
        record.setattr(intern!(py, "_route"), record::route_word(py, route))
    }

    /// The call overran `seconds`: its record says so (the call counts as executed). An
    /// isolated tool's worker was stopped; a sync tool's thread keeps running until the
    /// function returns, and its result is dropped.
    fn time_out(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        seconds: Option<f64>,
        elapsed: f64,
    ) -> PyResult<()> {
        let call = prepared_call(record)?;
        let call = call.get();
        self.enter(call);
        let outcome = Outcome::TimedOut {
            seconds: seconds.unwrap_or(0.0),
            stopped: call.isolation.is_some(),
        };
        self.write(py, record, call, outcome, None, elapsed)
    }

    /// An exception that escaped a call run elsewhere (a worker thread): see `run`.
    fn fail(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        exc: Bound<'_, PyAny>,
        elapsed: f64,
    ) -> PyResult<()> {
        let call = prepared_call(record)?;
        let err = PyErr::from_value(exc);
        let err = match self.complete_error(py, record, call.get(), err, elapsed) {
            Ok(()) => return Ok(()),
            Err(err) => err,
        };
        // Not a tool's result (KeyboardInterrupt in a worker): the last net.
        let problem = exception_problem(py, &err);
        self.write(
            py,
            record,
            call.get(),
            Outcome::Raised(problem),
            None,
            elapsed,
        )
    }

    /// Refuses a call that will not run: `why` is `no_confirm` (no callback), `confirm_failed`
    /// (the callback raised `exc`), `not_approved`, `declined` (a person refused it and gave
    /// `reason`), `no_elicitation` (a served call whose MCP client cannot be asked), or
    /// `skipped` (the run ended first). `pending` marks a call that awaits a person's decision
    /// while the run is paused: it stays unfinished, so it may still be refused (skipped) when
    /// a later call of its response ends the run.
    #[pyo3(signature = (record, why, exc = None, reason = None))]
    fn refuse(
        &self,
        py: Python<'_>,
        record: &Bound<'_, PyAny>,
        why: &str,
        exc: Option<Bound<'_, PyAny>>,
        reason: Option<String>,
    ) -> PyResult<()> {
        let name: String = record
            .getattr(intern!(py, "name"))?
            .str()?
            .to_string_lossy()
            .into_owned();
        let (status, text) = match why {
            "no_confirm" => (
                CallStatus::NotConfirmed,
                messages::no_confirm_callback(&name),
            ),
            "confirm_failed" => {
                let problem = exc
                    .map(|e| exception_problem(py, &PyErr::from_value(e)))
                    .unwrap_or_default();
                (
                    CallStatus::NotConfirmed,
                    messages::confirmation_failed(&name, &problem),
                )
            }
            "not_approved" => (CallStatus::NotConfirmed, messages::not_approved(&name)),
            "declined" => (
                CallStatus::NotConfirmed,
                messages::declined(&name, reason.as_deref().unwrap_or_default()),
            ),
            "no_elicitation" => (CallStatus::NotConfirmed, messages::no_elicitation(&name)),
            "skipped" => (CallStatus::Skipped, messages::skipped()),
            "pending" => (CallStatus::Pending, messages::pending(&name)),
            // A paused question settled by the person's answer (the text the model reads).
            "answered" => (CallStatus::Success, reason.unwrap_or_default()),
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown refusal {other:?}"
                )))
            }
        };
        if status != CallStatus::Pending {
            if let Ok(call) = prepared_call(record) {
                if !call.get().finish() {
                    return Ok(());
                }
            }
        }
        if matches!(why, "not_approved" | "declined" | "confirm_failed") {
            self.refusals.record(&name); // a person's refusal (see `approval`)
        }
        record.setattr(intern!(py, "status"), status_word(py, status))?;
        record.setattr(intern!(py, "output"), text)
    }

    /// The approval rules' verdict before anyone is asked: True, False, or None (see `approval`).
    fn decide_unasked(&self, py: Python<'_>, record: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
        self.decide_by_rules(py, record)
    }

    /// Releases a result held for the output guardrails (replaced, if given): cut and framed.
    #[pyo3(signature = (record, replacement = None))]
    fn release(&self, record: &Bound<'_, PyAny>, replacement: Option<String>) -> PyResult<()> {
        self.release_held(record.py(), record, replacement)
    }

    /// A guardrail's `refuse`, `fail` or `trip` at `stage` (`input`, `output`): see `guarded`.
    fn guardrail(
        &self,
        record: &Bound<'_, PyAny>,
        stage: &str,
        verdict: &str,
        detail: &str,
    ) -> PyResult<()> {
        self.guardrail_outcome(record.py(), record, stage, verdict, detail)
    }

    /// The digest binding an approval to this admitted call: SHA-256 of its tool's real name
    /// and its arguments as canonical JSON (see [`executor::call_digest`]).
    fn digest(&self, record: &Bound<'_, PyAny>) -> PyResult<String> {
        let call = prepared_call(record)?;
        let call = call.get();
        Ok(executor::call_digest(call.entry.name(), &call.args))
    }

    /// Calls of this run that were started.
    #[getter]
    fn executed(&self) -> usize {
        self.executed.load(Ordering::Relaxed)
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(r) = &self.registry {
            visit.call(r)?;
        }
        if let Some(i) = &self.isolate {
            visit.call(i)?;
        }
        Ok(())
    }
}
