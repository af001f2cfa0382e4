//! The rmcp `ServerHandler` of a served registry: `initialize`, `tools/list`, `tools/call`.
//!
//! A call is handed to the host through the [`Hub`]; this side only speaks the protocol: it
//! enforces the concurrent-call limit, turns a `notifications/cancelled` (rmcp cancels the
//! request's token) into an [`crate::mcp_server::Event::Cancel`] for the host, and turns the
//! host's [`Reply`] into a `CallToolResult` (`isError` for every failure the host reports, with
//! the text an agent's model would read).
//!
//! Both eras of the protocol are served: clients that `initialize` (up to 2025-11-25) and
//! clients that open with `server/discover` and send their version and capabilities in each
//! request's `_meta` (2026-07-28; rmcp handles the discovery). Which era a call belongs to
//! decides how the person can be asked ([`Asking`]); a 2026-07-28 retry's `requestState` is
//! checked here, before the call is queued, and a bad one is refused as invalid params.

use super::hub::{Asking, Hub, Outcome, Reply};
use super::rounds::{arguments_value, binding};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::ServerHandler;
use std::sync::Arc;

/// One client session's handler (cheap: every session shares the [`Hub`]).
#[derive(Clone)]
pub struct Served {
    hub: Arc<Hub>,
}

impl Served {
    pub fn new(hub: Arc<Hub>) -> Served {
        Served { hub }
    }
}

/// The `CallToolResult` of a host's reply.
pub fn call_result(reply: Reply) -> CallToolResult {
    let content = vec![ContentBlock::text(reply.text)];
    let mut result = if reply.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    if !reply.is_error {
        result.structured_content = reply.structured;
    }
    result
}

impl Served {
    /// How the person at this call's client can be asked; a 2026-07-28 retry whose
    /// `requestState` does not hold for this tool and these arguments is refused.
    fn asking(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Asking, ErrorData> {
        let can_elicit = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        let rounds = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if !rounds {
            return Ok(if can_elicit {
                Asking::Request
            } else {
                Asking::Nobody
            });
        }
        let bound = binding(&request.name, &arguments_value(request.arguments.as_ref()));
        let answers = self.hub.rounds().answers(
            &bound,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )?;
        Ok(if can_elicit {
            Asking::Rounds { bound, answers }
        } else {
            Asking::Nobody
        })
    }
}

impl ServerHandler for Served {
    fn get_info(&self) -> InitializeResult {
        let identity = self.hub.identity();
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let result = InitializeResult::new(capabilities).with_server_info(Implementation::new(
            identity.name.clone(),
            identity.version.clone(),
        ));
        match &identity.instructions {
            Some(text) => result.with_instructions(text.clone()),
            None => result,
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.hub.add_peer(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.hub.tools()).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let asking = self.asking(&request, &context)?;
        let _slot = match self.hub.admit() {
            Ok(slot) => slot,
            Err(text) => {
                return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                    ContentBlock::text(text),
                ])))
            }
        };
        let arguments = match &request.arguments {
            Some(args) => serde_json::to_string(args).unwrap_or_else(|_| "{}".into()),
            None => "{}".into(),
        };
        let progress = context.meta.get_progress_token();
        let (id, reply) = self.hub.submit(
            request.name.to_string(),
            arguments,
            context.peer.clone(),
            progress,
            asking,
        );
        tokio::select! {
            reply = reply => match reply {
                Ok(Outcome::Done(reply)) => Ok(CallToolResponse::Complete(call_result(reply))),
                Ok(Outcome::InputRequired(asked)) => Ok(CallToolResponse::InputRequired(asked)),
                Err(_) => Err(ErrorData::internal_error("the server stopped before the call finished", None)),
            },
            () = context.ct.cancelled() => {
                self.hub.cancel(id);
                Err(ErrorData::internal_error("the call was cancelled", None))
            }
            () = self.hub.stop_token().cancelled() => {
                self.hub.cancel(id);
                Err(ErrorData::internal_error("the server is shutting down", None))
            }
        }
    }
}
