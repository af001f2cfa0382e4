//! rmcp's transport over the server's stdin and stdout, with our bounds on what is read.
//!
//! Every message goes through rmcp's client service; this is the [`Transport`] it is given
//! (wrapped in [`OwnMessagesAnswered`](super::own_messages::OwnMessagesAnswered), which answers the
//! server's own requests). Reading goes through [`LineGuard`], which lets only complete JSON
//! lines within [`MAX_MESSAGE_BYTES`](super::line_guard::MAX_MESSAGE_BYTES) and
//! [`MAX_MESSAGE_DEPTH`](super::line_guard::MAX_MESSAGE_DEPTH) through, each cut to
//! [`MAX_ANSWER_VALUES`](super::bounded::MAX_ANSWER_VALUES) before it is parsed. What rmcp's
//! own line transport would do differently, and why it is not used:
//!
//! - An answer that names one of our requests but cannot be read (truncated JSON, an error
//!   object of the wrong shape, neither a result nor an error) fails that request at once with
//!   the reason. rmcp drops such a line (or answers it with "invalid request"), and the call
//!   waited for its timeout, for ever with none.
//! - Anything else it cannot read (noise, a malformed request of the server's) is dropped
//!   without a reply: replying to garbage invites a storm of it.
//! - Ids are read leniently: rmcp numbers its requests with integers, and an answer whose id
//!   is the same number written as a string (`"7"`) or with a fraction (`7.0`) is taken as the
//!   answer to request 7 (rmcp matches ids exactly, and the call waited for its timeout).
//! - Messages are written in the order rmcp hands them over. rmcp runs each send as a task of
//!   its own, so a `notifications/cancelled` could overtake the request it cancels, which the
//!   server then runs to the end. Here `send` queues the message at once, and one writer task
//!   writes the queue in order (what piled up in one write). A server that stops reading its
//!   input makes sends fail once [`MAX_UNWRITTEN`] bytes wait, rather than pile up.

use super::bounded::{error_answer, is_string_or_number, Envelope, MAX_SERVER_ID_BYTES};
use super::line_guard::{response_id, LineGuard};
use rmcp::model::{JsonRpcMessage, NumberOrString};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::future::Future;
use std::io::{Error, ErrorKind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// How much of a line that cannot be read is searched for its request id.
const ID_SCAN_BYTES: usize = 4096;
/// Bytes queued for the server beyond this make sends fail (it stopped reading its input).
pub const MAX_UNWRITTEN: usize = 64 * 1024 * 1024;

/// One message for the writer task, and where to say it was written.
type Queued = (Vec<u8>, oneshot::Sender<Result<(), ErrorKind>>);

pub struct LineTransport<R> {
    read: BufReader<LineGuard<R>>,
    /// The line being read; kept across a cancelled `receive` (rmcp polls it in a `select!`).
    line: Vec<u8>,
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
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            queue: Some(queue),
            unwritten,
        }
    }
}

/// Writes queued messages in order, as many as are waiting in one write; ends (closing
/// `write`) when the transport is closed or dropped, or at the first failed write.
async fn write_in_order<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queued: mpsc::UnboundedReceiver<Queued>,
    unwritten: Arc<AtomicUsize>,
) {
    let mut batch = Vec::new();
    let mut done = Vec::new();
    while let Some((bytes, sent)) = queued.recv().await {
        batch.extend_from_slice(&bytes);
        done.push(sent);
        while let Ok((bytes, sent)) = queued.try_recv() {
            batch.extend_from_slice(&bytes);
            done.push(sent);
        }
        let result = match write.write_all(&batch).await {
            Ok(()) => write.flush().await,
            Err(e) => Err(e),
        };
        unwritten.fetch_sub(batch.len(), Ordering::Relaxed);
        batch.clear();
        let failed = result.as_ref().err().map(Error::kind);
        for sent in done.drain(..) {
            let _ = sent.send(failed.map_or(Ok(()), Err));
        }
        if failed.is_some() {
            return;
        }
    }
    let _ = write.shutdown().await;
}

/// A line the guard let through, as rmcp's message; `None` to drop it.
fn decode(line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    // serde reads a struct from a JSON array too (fields by position): only objects here.
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
        Ok(message) => return Some(with_numeric_id(message)),
        Err(e) => match with_integral_id(line) {
            Some(message) => return Some(message),
            None => e,
        },
    };
    let (id, reason) = match serde_json::from_slice::<Envelope<'_>>(line) {
        // Not JSON, but it may name one of our requests (a truncated or garbled answer).
        Err(_) => (
            response_id(&line[..line.len().min(ID_SCAN_BYTES)])?,
            format!("the server's answer is not valid JSON: {error}"),
        ),
        Ok(env) if env.method.is_some() => return None,
        Ok(env) => {
            let reason = match (env.result, env.error) {
                (None, None) => "the server's answer has neither a result nor an error".into(),
                (_, Some(err)) => format!("malformed error answer: {}", err.get()),
                _ => format!("the server's answer is not a valid JSON-RPC response: {error}"),
            };
            (env.id?.get().to_owned(), reason)
        }
    };
    if id.len() > MAX_SERVER_ID_BYTES || !is_string_or_number(&id) {
        return None;
    }
    serde_json::from_str(&error_answer(&id, -32603, &reason)).ok()
}

/// An answer whose id is a string of digits, with the number as its id (see the module
/// documentation: rmcp's own requests have integer ids).
fn with_numeric_id(mut message: RxJsonRpcMessage<RoleClient>) -> RxJsonRpcMessage<RoleClient> {
    let id = match &mut message {
        JsonRpcMessage::Response(answer) => Some(&mut answer.id),
        JsonRpcMessage::Error(error) => error.id.as_mut(),
        _ => None,
    };
    if let Some(id) = id {
        if let NumberOrString::String(text) = id {
            let digits =
                !text.is_empty() && text.len() <= 18 && text.bytes().all(|b| b.is_ascii_digit());
            if let Some(n) = digits.then(|| text.parse().ok()).flatten() {
                *id = NumberOrString::Number(n);
            }
        }
    }
    message
}

/// An answer rmcp could not read only because its id is an integral number written with a
/// fraction (`7.0`), with the integer as its id; `None` for anything else.
fn with_integral_id(line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    let env = serde_json::from_slice::<Envelope<'_>>(line).ok()?;
    let n = env.id?.get().parse::<f64>().ok()?;
    if env.method.is_some() || n.fract() != 0.0 || !(0.0..9e15).contains(&n) {
        return None;
    }
    let mut value = serde_json::from_slice::<serde_json::Value>(line).ok()?;
    value["id"] = serde_json::Value::from(n as i64);
    serde_json::from_value(value).ok()
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
        let queued = match serde_json::to_vec(&item) {
            Err(e) => Err(Error::other(e)),
            Ok(mut bytes) => {
                bytes.push(b'\n');
                self.enqueue(bytes)
            }
        };
        async move {
            match queued?.await {
                Ok(result) => {
                    result.map_err(|kind| Error::new(kind, "writing to the server failed"))
                }
                Err(_) => Err(Error::new(
                    ErrorKind::BrokenPipe,
                    "the server's input is closed",
                )),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            // Cancel-safe: what a cancelled read took stays in `self.line`.
            match self.read.read_until(b'\n', &mut self.line).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if self.line.last() != Some(&b'\n') {
                return None; // the output ended inside a line
            }
            let message = decode(&self.line);
            self.line.clear();
            if message.is_some() {
                return message;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer ends once the queue is written, closing the server's stdin: the server
        // is asked to exit.
        self.queue = None;
        Ok(())
    }
}

impl<R> LineTransport<R> {
    /// Queues `bytes` for the writer, in the order of the calls.
    fn enqueue(&self, bytes: Vec<u8>) -> std::io::Result<oneshot::Receiver<Result<(), ErrorKind>>> {
        let queue = self.queue.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::NotConnected,
                "the connection to the server is closed",
            )
        })?;
        let len = bytes.len();
        if self.unwritten.fetch_add(len, Ordering::Relaxed) + len > MAX_UNWRITTEN {
            self.unwritten.fetch_sub(len, Ordering::Relaxed);
            return Err(Error::new(
                ErrorKind::WouldBlock,
                format!("the server is not reading its input ({MAX_UNWRITTEN} bytes wait to be written)"),
            ));
        }
        let (sent, written) = oneshot::channel();
        queue
            .send((bytes, sent))
            .map_err(|_| Error::new(ErrorKind::BrokenPipe, "the server's input is closed"))?;
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_text(message: Option<RxJsonRpcMessage<RoleClient>>) -> (String, String) {
        match message {
            Some(JsonRpcMessage::Error(e)) => (
                serde_json::to_string(&e.id).unwrap(),
                e.error.message.to_string(),
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_answer_naming_a_request_that_cannot_be_read_fails_it() {
        let (id, text) = error_text(decode(
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type""#,
        ));
        assert_eq!(id, "3");
        assert!(
            text.starts_with("the server's answer is not valid JSON"),
            "{text}"
        );
        let (id, text) = error_text(decode(br#"{"jsonrpc":"2.0","id":"x"}"#));
        assert_eq!(id, r#""x""#);
        assert_eq!(
            text,
            "the server's answer has neither a result nor an error"
        );
        let (_, text) = error_text(decode(br#"{"jsonrpc":"2.0","id":4,"error":"boom"}"#));
        assert_eq!(text, r#"malformed error answer: "boom""#);
    }

    #[test]
    fn an_id_of_the_right_number_in_the_wrong_type_is_read_as_that_number() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":"7","result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":7.0,"result":{}}"#,
        ] {
            match decode(line) {
                Some(JsonRpcMessage::Response(r)) => assert_eq!(r.id, NumberOrString::Number(7)),
                other => panic!("{other:?}"),
            }
        }
        let (id, _) = error_text(decode(
            br#"{"jsonrpc":"2.0","id":"8","error":{"code":1,"message":"m"}}"#,
        ));
        assert_eq!(id, "8");
        // Other strings stay as they are; a fraction is no request of ours.
        match decode(br#"{"jsonrpc":"2.0","id":"a7","result":{}}"#) {
            Some(JsonRpcMessage::Response(r)) => {
                assert_eq!(r.id, NumberOrString::String("a7".into()))
            }
            other => panic!("{other:?}"),
        }
        assert!(decode(br#"{"jsonrpc":"2.0","id":7.5,"result":{}}"#).is_none());
    }

    #[test]
    fn what_names_no_request_is_dropped() {
        assert!(decode(b"[1, 2]").is_none());
        assert!(decode(br#"{"jsonrpc":"2.0","result":{}"#).is_none());
        assert!(decode(br#"{"jsonrpc":"2.0","id":{"a":1},"result":{}}"#).is_none());
        // A malformed request of the server's gets no reply.
        assert!(decode(br#"{"jsonrpc":"2.0","id":1,"method":5}"#).is_none());
        // A good answer passes.
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Some(JsonRpcMessage::Response(_))
        ));
    }

    #[tokio::test]
    async fn messages_go_whole_and_lines_come_back_bounded() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (their_read, mut their_write) = tokio::io::split(theirs);
        let (our_read, our_write) = tokio::io::split(ours);
        let mut t = LineTransport::new(LineGuard::with_limit(our_read, 1024), our_write);
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
