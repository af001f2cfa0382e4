//! rmcp's own client, in Rust, calling `bench_mcp_server`: the floor for
//! `benches/bench_mcp.py` (what a call costs with no Python and no agentmaker at all).
//!
//! It connects, warms up, prints `ready`, then answers one line per command read from stdin, so
//! that the bench can interleave its batches with the other clients' at a fine grain:
//! `calls N` times N sequential calls and prints the mean per call; `burst N` times one burst
//! of N concurrent calls (each a tokio task on a clone of the client's peer) and prints its
//! wall time; both in microseconds. It exits at the end of its input.
//! Usage: bench_mcp_rmcp_client SERVER_BINARY

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, Implementation, InitializeRequestParams,
};
use rmcp::ServiceExt;
use std::io::{BufRead, Write};
use std::process::Stdio;
use std::time::Instant;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = std::env::args()
        .nth(1)
        .ok_or("usage: bench_mcp_rmcp_client SERVER_BINARY")?;
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
    for _ in 0..300 {
        client.call_tool(call()).await?;
    }
    println!("ready");
    std::io::stdout().flush()?;
    // Commands are read on this thread between timings (a blocking read, never timed).
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let (command, n) = line
            .split_once(' ')
            .ok_or("expected `calls N` or `burst N`")?;
        let n: u32 = n.trim().parse()?;
        let start = Instant::now();
        match command {
            "calls" => {
                for _ in 0..n {
                    client.call_tool(call()).await?;
                }
            }
            "burst" => {
                let mut burst = tokio::task::JoinSet::new();
                for _ in 0..n {
                    let peer = client.peer().clone();
                    let params = call();
                    burst.spawn(async move { peer.call_tool(params).await });
                }
                while let Some(done) = burst.join_next().await {
                    done??;
                }
            }
            other => return Err(format!("unknown command {other:?}").into()),
        }
        let us = start.elapsed().as_secs_f64() * 1e6;
        let per = if command == "calls" {
            us / f64::from(n)
        } else {
            us
        };
        println!("{per:.2}");
        std::io::stdout().flush()?;
    }
    client.cancel().await?;
    Ok(())
}
