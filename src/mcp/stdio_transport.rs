//! rmcp's transport over the server's stdin and stdout, read by a [`LineGuard`].
//!
//! Messages are written in the order rmcp hands them over. rmcp runs each send as a task of its
//! own, so a `notifications/cancelled` could overtake the request it cancels, which the server
//! then runs to the end. Here `send` queues the message at once, and one writer task writes the
//! queue in order (what piled up in one write). A server that stops reading its input makes
//! sends fail once [`MAX_UNWRITTEN`] bytes wait, rather than pile up.

use super::line_guard::LineGuard;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use std::io::{Error, ErrorKind};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Bytes queued for the server beyond this make sends fail (it stopped reading its input).
pub const MAX_UNWRITTEN: usize = 64 * 1024 * 1024;

/// One message for the writer task, and where to say whether it was written.
type Queued = (Vec<u8>, oneshot::Sender<Result<(), ErrorKind>>);
type Written = oneshot::Receiver<Result<(), ErrorKind>>;

pub struct LineTransport<R> {
    read: LineGuard<R>,
    /// `None` once closed: the writer task then ends, which closes the server's stdin.
    queue: Option<mpsc::UnboundedSender<Queued>>,
    unwritten: Arc<AtomicUsize>,
}

impl<R: AsyncRead + Unpin> LineTransport<R> {
    /// Must run inside a tokio runtime: the writer is a task on it.
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(read: LineGuard<R>, write: W) -> Self {
        let (queue, queued) = mpsc::unbounded_channel();
        let unwritten = Arc::new(AtomicUsize::new(0));
        tokio::spawn(write_in_order(write, queued, unwritten.clone()));
        LineTransport {
            read,
            queue: Some(queue),
            unwritten,
        }
    }

    /// Queues `item` for the writer, in the order of the calls.
    fn enqueue(&self, item: TxJsonRpcMessage<RoleClient>) -> std::io::Result<Written> {
        let closed = || Error::new(ErrorKind::BrokenPipe, "the server's input is closed");
        let queue = self.queue.as_ref().ok_or_else(closed)?;
        let mut bytes = serde_json::to_vec(&item).map_err(Error::other)?;
        bytes.push(b'\n');
        let len = bytes.len();
        if self.unwritten.fetch_add(len, Relaxed) + len > MAX_UNWRITTEN {
            self.unwritten.fetch_sub(len, Relaxed);
            let why = format!(
                "the server is not reading its input ({MAX_UNWRITTEN} bytes wait to be written)"
            );
            return Err(Error::new(ErrorKind::WouldBlock, why));
        }
        let (sent, written) = oneshot::channel();
        queue.send((bytes, sent)).map_err(|_| closed())?;
        Ok(written)
    }
}

/// Writes queued messages in order, as many as are waiting in one write; ends (closing
/// `write`) when the transport is closed or dropped, or at the first failed write.
async fn write_in_order<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queued: mpsc::UnboundedReceiver<Queued>,
    unwritten: Arc<AtomicUsize>,
) {
    let (mut waiting, mut batch) = (Vec::new(), Vec::new());
    while queued.recv_many(&mut waiting, usize::MAX).await > 0 {
        for (bytes, _) in &waiting {
            batch.extend_from_slice(bytes);
        }
        let result = async {
            write.write_all(&batch).await?;
            write.flush().await
        }
        .await;
        unwritten.fetch_sub(batch.len(), Relaxed);
        batch.clear();
        let failed = result.err().map(|e| e.kind());
        for (_, sent) in waiting.drain(..) {
            let _ = sent.send(failed.map_or(Ok(()), Err));
        }
        if failed.is_some() {
            return;
        }
    }
    let _ = write.shutdown().await;
}

impl<R> Transport<RoleClient> for LineTransport<R>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queued = self.enqueue(item);
        async move {
            // A writer gone before writing it (an earlier write failed): the pipe is broken.
            let written = queued?.await.unwrap_or(Err(ErrorKind::BrokenPipe));
            written.map_err(|kind| Error::new(kind, "writing to the server failed"))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.read.next().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer ends once the queue is written, closing the server's stdin: the server
        // is asked to exit.
        self.queue = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::JsonRpcMessage;
    use tokio::io::{AsyncBufReadExt, BufReader};

    fn error_text(message: Option<RxJsonRpcMessage<RoleClient>>) -> (String, String) {
        match message {
            Some(JsonRpcMessage::Error(e)) => (
                serde_json::to_string(&e.id).unwrap(),
                e.error.message.to_string(),
            ),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn messages_go_whole_and_lines_come_back_bounded() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (their_read, mut their_write) = tokio::io::split(theirs);
        let (our_read, our_write) = tokio::io::split(ours);
        let mut t = LineTransport::new(LineGuard::new(our_read, 1024), our_write);
        let ping = rmcp::model::ClientRequest::PingRequest(Default::default());
        t.send(JsonRpcMessage::request(
            ping,
            rmcp::model::NumberOrString::Number(1),
        ))
        .await
        .unwrap();
        let mut lines = BufReader::new(their_read).lines();
        let sent: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(sent["method"], "ping");
        let big = "x".repeat(2000);
        let reply = format!(
            "noise\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"{big}\"}}}}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}\n"
        );
        their_write.write_all(reply.as_bytes()).await.unwrap();
        let (id, text) = error_text(t.receive().await);
        assert_eq!(id, "1");
        assert!(text.contains("larger than 1024 bytes"), "{text}");
        assert!(matches!(
            t.receive().await,
            Some(JsonRpcMessage::Response(_))
        ));
        drop((their_write, lines));
        assert!(t.receive().await.is_none());
    }
}
