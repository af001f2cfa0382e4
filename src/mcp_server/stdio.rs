//! Serving one client over a pair of pipes (the client spawned this process).
//!
//! The host passes its own duplicates of stdin and stdout, so it can point file descriptor 1
//! at stderr: a tool that prints then cannot corrupt the protocol stream.

use super::handler::Served;
use super::hub::Hub;
use rmcp::ServiceExt;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use tokio::net::unix::pipe;

/// Serve until the client closes its end (or the hub stops). `read` and `write` must be pipes
/// or FIFOs.
pub async fn serve_pipes(hub: Arc<Hub>, read: OwnedFd, write: OwnedFd) -> std::io::Result<()> {
    let rx = pipe::Receiver::from_owned_fd(read)?;
    let tx = pipe::Sender::from_owned_fd(write)?;
    let stop = hub.stop_token().clone();
    let running = Served::new(hub)
        .serve((rx, tx))
        .await
        .map_err(|e| std::io::Error::other(format!("MCP handshake failed: {e}")))?;
    let cancel = running.cancellation_token();
    tokio::select! {
        _ = running.waiting() => {}
        () = stop.cancelled() => cancel.cancel(),
    }
    Ok(())
}
