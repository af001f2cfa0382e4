//! The rmcp `ServerHandler` of a served registry: `initialize`, `tools/list`, `tools/call`.
//!
//! A call is handed to the host through the [`Hub`]; this side only speaks the protocol: it
//! enforces the concurrent-call limit, turns a `notifications/cancelled` (rmcp cancels the
//! request's token) into an [`crate::mcp_server::Event::Cancel`] for the host, and turns the
//! host's [`Reply`] into a `CallToolResult` (`isError` for every failure the host reports, with
//! the text an agent's model would read).

use super::hub::{Hub, Reply};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
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
        );
        tokio::select! {
            reply = reply => match reply {
                Ok(reply) => Ok(CallToolResponse::Complete(call_result(reply))),
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
