//! A tiny rmcp stdio MCP server with 50 tools, for `benches/mcp.py`: it answers instantly, so a
//! round trip measures the client. Built only with `--features bench-server` (CI never
//! builds it): `cargo build --release --no-default-features --features bench-server --example bench_mcp_server`.

use agentmaker::mcp::batch_write::BatchWriter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use rmcp::ServerHandler;
use std::os::fd::AsFd;
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
        let args = request.arguments.unwrap_or_default();
        let a = args.get("a").and_then(|v| v.as_i64()).unwrap_or(0);
        let b = args.get("b").and_then(|v| v.as_i64()).unwrap_or(0);
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text((a + b).to_string()),
        ])))
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
    let bench = Bench { tools };
    // stdin/stdout as non-blocking pipes (tokio's own stdio does each write on a blocking
    // thread), with replies coalesced while a write is in flight: the server should not be
    // what the benchmark measures. From a terminal, plain stdio.
    let service = match pipes() {
        Ok((rx, tx)) => bench.serve((rx, BatchWriter::new(tx))).await?,
        Err(_) => bench.serve(rmcp::transport::stdio()).await?,
    };
    service.waiting().await?;
    Ok(())
}
