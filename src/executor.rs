//! The call pipeline: one model tool call, from the call the model made to the text it reads.
//!
//! The gates every call passes, in order (each refusal becomes an error text for the model and
//! the run goes on):
//!
//! 1. a well-formed call: an id, a function name, arguments that are a JSON object
//!    ([`arguments`]; text that strict parsing refuses is read leniently, see [`repair`]);
//! 2. the tool exists (the binding looks it up, by real name then wire name);
//! 3. permissions: deny wins, then allowlists, before anything else sees the call;
//! 4. argument validation with the tool's one cached validator, so nobody is asked to approve
//!    a malformed call (arguments that fail it are first coerced to the schema where exactly
//!    one reading fits, see [`repair::coerce`]);
//! 5. whether the call needs confirmation (only a valid call is asked about);
//! 6. admission by the run's limits (kept by the caller, see [`crate::run_policy`]);
//! 7. execution, on the route [`plan::route`] picks, under the call's timeout;
//! 8. the outcome as the model's text: cut to `max_result_chars` ([`cut`]), then wrapped
//!    against prompt injection when the tool marks its result external ([`finish`]).
//!
//! A direct call by the program (`ToolRegistry.execute_tool`, `aexecute_tool`) passes gates
//! 1-4 the same way ([`prepare::admit`]): the same lookup, validation and texts as a model's call,
//! with nobody to ask and no batch to plan.
//!
//! [`prepare::prepare`] runs gates 1-5 once and gives a [`prepare::Prepared`] call; the caller
//! hosts the tool's callable (and a person's confirmation) and hands the outcome to
//! [`finish::finish`]. Every model-facing text of the pipeline is in [`messages`].

pub mod approval;
pub mod arguments;
pub mod cut;
pub mod digest;
pub mod finish;
pub mod guardrails;
pub mod messages;
pub mod plan;
pub mod prepare;
pub mod repair;
pub mod status;

pub use digest::call_digest;
pub use finish::{finish, Finished, Outcome, ResultFlags};
pub use plan::{groups, route, Group, Kind, Route, Slot};
pub use prepare::{admit, prepare, CallTarget, Prepared, Refusal, Settings};
pub use repair::{RepairMode, Repairing};
pub use status::CallStatus;
