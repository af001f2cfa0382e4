//! A tiny rmcp stdio MCP server with 50 tools, for `benches/bench_mcp.py`: it answers
//! instantly, so a round trip measures the client. Built only with `--features bench-server`
//! (CI never builds it):
//! `cargo build --release --no-default-features --features bench-server --example bench_mcp_server`.
//!
//! It is an rmcp `ServerHandler` run by rmcp's own `serve` loop over rmcp's own line
//! transport (on non-blocking pipes).
//!
//! The handler is rmcp's `ServerHandler`, served through [`Quick`], an rmcp `Service` that
//! answers a `tools/call` of a session opened with `initialize` in place (the same checks and
//! the same answer as rmcp's generic handler) and hands every other request to that handler.
//! rmcp's `serve` loop spawns one task per request, and the generic handler's future is the
//! size of its largest branch (every request kind of the protocol): moving it into each task
//! was a fifth of this server's CPU per call.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientNotification, ClientRequest,
    ContentBlock, ErrorData, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service, ServiceExt};
use rmcp::ServerHandler;
use std::borrow::Cow;
use std::future::Future;
use std::os::fd::AsFd;
use std::pin::Pin;
use std::sync::Arc;
use tokio::net::unix::pipe;

fn pipes() -> std::io::Result<(pipe::Receiver, pipe::Sender)> {
    let rx = pipe::Receiver::from_owned_fd(std::io::stdin().as_fd().try_clone_to_owned()?)?;
    let tx = pipe::Sender::from_owned_fd(std::io::stdout().as_fd().try_clone_to_owned()?)?;
    Ok((rx, tx))
}

struct Bench {
    tools: Vec<Tool>,
}

impl ServerHandler for Bench {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResponse::Complete(add(&request)))
    }
}

/// What every tool does: `a + b`, as text.
fn add(request: &CallToolRequestParams) -> CallToolResult {
    let arg = |key: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|args| args.get(key))
            .and_then(|v| v.as_i64())
            .unwrap_or(0)
    };
    CallToolResult::success(vec![ContentBlock::text((arg("a") + arg("b")).to_string())])
}

type Answer<'a> = Pin<Box<dyn Future<Output = Result<ServerResult, ErrorData>> + Send + 'a>>;

/// [`Bench`] as an rmcp `Service`. A `tools/call` in a session that negotiated a version
/// before 2026-07-28 through `initialize` and whose request names no version of its own is
/// answered here, as rmcp's generic handler would answer it (it checks nothing else for such
/// a call, and strips the same fields from the result); everything else goes to that
/// handler.
struct Quick(Bench);

impl Service<RoleServer> for Quick {
    fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ServerResult, ErrorData>> + Send + '_ {
        let legacy = || {
            context.meta.protocol_version().is_none()
                && context
                    .protocol_version()
                    .is_some_and(|v| v.as_str() < ProtocolVersion::V_2026_07_28.as_str())
        };
        let answer: Answer<'_> = match request {
            ClientRequest::CallToolRequest(call) if legacy() => {
                let mut result = ServerResult::from(CallToolResponse::Complete(add(&call.params)));
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                Box::pin(std::future::ready(Ok(result)))
            }
            other => Box::pin(Service::handle_request(&self.0, other, context)),
        };
        answer
    }

    fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        Box::pin(Service::handle_notification(&self.0, notification, context))
    }

    fn get_info(&self) -> InitializeResult {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schema: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}"#,
    )?;
    let schema = Arc::new(schema);
    let tools = (0..50)
        .map(|i| {
            Tool::new(
                format!("tool_{i:03}"),
                format!("Adds a and b (tool {i})."),
                schema.clone(),
            )
        })
        .collect();
    let bench = Quick(Bench { tools });
    // stdin/stdout as non-blocking pipes (tokio's own stdio does each write on a blocking
    // thread): the server should not be what the benchmark measures. From a terminal, plain
    // stdio.
    let service = match pipes() {
        Ok((rx, tx)) => bench.serve((rx, tx)).await?,
        Err(_) => bench.serve(rmcp::transport::stdio()).await?,
    };
    service.waiting().await?;
    Ok(())
}
