//! rmcp's own client, in Rust, calling `bench_mcp_server` in a loop: the floor for
//! `benches/bench_mcp.py` (what a round trip costs with no Python and no agentmaker at all).
//! Prints the best per-call time of five runs in microseconds, then the best time of five
//! bursts of 200 concurrent calls (each a tokio task on a clone of the client's peer), also in
//! microseconds. Usage: bench_mcp_rmcp_client SERVER_BINARY [CALLS]

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, Implementation, InitializeRequestParams,
};
use rmcp::ServiceExt;
use std::process::Stdio;
use std::time::Instant;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let server = argv
        .next()
        .ok_or("usage: bench_mcp_rmcp_client SERVER_BINARY [CALLS]")?;
    let calls: u32 = argv.next().map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let mut child = tokio::process::Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let info = InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("rmcp-floor", "1"),
    );
    let client = info.serve((stdout, stdin)).await?;
    let args: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(r#"{"a": 2, "b": 3}"#)?;
    let call = || CallToolRequestParams::new("tool_000").with_arguments(args.clone());
    for _ in 0..100 {
        client.call_tool(call()).await?;
    }
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..calls {
            client.call_tool(call()).await?;
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e6 / f64::from(calls));
    }
    let mut best_burst = f64::INFINITY;
    for _ in 0..6 {
        let start = Instant::now();
        let mut burst = tokio::task::JoinSet::new();
        for _ in 0..200 {
            let peer = client.peer().clone();
            let params = call();
            burst.spawn(async move { peer.call_tool(params).await });
        }
        while let Some(done) = burst.join_next().await {
            done??;
        }
        best_burst = best_burst.min(start.elapsed().as_secs_f64() * 1e6);
    }
    println!("{best:.2} {best_burst:.2}");
    client.cancel().await?;
    Ok(())
}
