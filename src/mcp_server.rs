//! Serving a tool registry as an MCP server (rmcp's server side).
//!
//! The protocol lives here; running a call does not. A served `tools/call` becomes an
//! [`Event::Call`] on the [`Hub`]'s queue, which the host (the Python binding, which runs the
//! call through the same `CallPipeline` an agent uses) takes with [`Hub::next_event`] and answers
//! with [`Hub::reply`]. The host also sets the tool list ([`Hub::set_tools`]): a change is
//! announced to every connected client with `notifications/tools/list_changed`.
//!
//! - [`hub`]: the queue of calls, their pending replies, the tool list and the connected peers.
//! - [`handler`]: the rmcp `ServerHandler` (listing, calling, the concurrent-call limit).
//! - [`rounds`]: asking the person on MCP 2026-07-28 (`input_required` results, a sealed
//!   `requestState`).
//! - [`stdio`]: serving one client over stdin and stdout.
//! - [`http`]: serving streamable HTTP (Host/Origin checks, authorization, body size limit).

pub mod handler;
pub mod http;
pub mod hub;
pub mod rounds;
pub mod stdio;

pub use handler::Served;
pub use hub::{Asking, Elicited, Event, Hub, Identity, Outcome, Reply};
