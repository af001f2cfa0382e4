//! What the server sends on its own, answered beside rmcp's session, over stdio and HTTP.

use rmcp::model::{
    ClientResult, CustomResult, ErrorCode, ErrorData, JsonRpcMessage, JsonRpcRequest,
    ServerRequest, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

/// Replies to the server's own requests that may wait to be posted at once; more are dropped.
/// rmcp posts replies one at a time, each allowed 5 s, on the queue our `notifications/cancelled`
/// also take: a server that holds reply POSTs open delays the cancellations sent to it (it
/// alone; calls and other servers are not held up), by at most this many times 5 s, after which
/// no more replies are tried (see [`OwnMessagesAnswered`]).
pub const MAX_REPLIES_IN_FLIGHT: usize = 32;

/// An rmcp transport (our stdio one, or rmcp's HTTP one), with what the server sends on its
/// own handled here instead of by rmcp's session: `ping` gets its empty
/// result, any other request "method not found", notifications are dropped. rmcp's session
/// spawns a task per such message and takes them faster than those tasks end (300,000 of them
/// on one call's event stream took the client to 900 MB). At most [`MAX_REPLIES_IN_FLIGHT`]
/// replies wait to be posted.
///
/// It also keeps an answer whose only fault is content blocks of a kind rmcp does not know, which
/// rmcp's `call_tool` refused ([`unknown_blocks_named`](super::bounded::unknown_blocks_named)).
/// Any other answer this would retype (`initialize`, `ping`) failed its typed request before
/// and still does.
pub struct OwnMessagesAnswered<T> {
    inner: T,
    replies: Arc<tokio::sync::Semaphore>,
    /// Turns true when a reply could not be posted (the server fails or holds them): no more
    /// are tried, and those still waiting are withdrawn (rmcp skips a queued message whose
    /// sender is gone), so they do not hold up our `notifications/cancelled`.
    replies_failed: tokio::sync::watch::Sender<bool>,
}

impl<T> OwnMessagesAnswered<T> {
    pub fn new(inner: T) -> Self {
        OwnMessagesAnswered {
            inner,
            replies: Arc::new(tokio::sync::Semaphore::new(MAX_REPLIES_IN_FLIGHT)),
            replies_failed: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl<T: Transport<RoleClient>> OwnMessagesAnswered<T> {
    fn answer(&mut self, request: JsonRpcRequest<ServerRequest>) {
        if *self.replies_failed.borrow() {
            return;
        }
        let Ok(permit) = self.replies.clone().try_acquire_owned() else {
            return;
        };
        let method = match &request.request {
            ServerRequest::PingRequest(_) => None,
            ServerRequest::CustomRequest(custom) => Some(custom.method.clone()),
            // Sampling, roots, elicitation, or a kind added to rmcp later: its method as rmcp
            // serializes it.
            other => Some(
                serde_json::to_value(other)
                    .ok()
                    .and_then(|v| Some(v.get("method")?.as_str()?.to_owned()))
                    .unwrap_or_else(|| "a request of a kind this client does not know".into()),
            ),
        };
        let reply = match method {
            None => JsonRpcMessage::response(ClientResult::empty(()), request.id),
            // The client offers no sampling, roots or elicitation.
            Some(method) => {
                let method = super::sanitize::sanitize_marked(&method, 100);
                let message =
                    format!("Method not found: this client answers only ping, not {method}");
                let error = ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None);
                JsonRpcMessage::error(error, Some(request.id))
            }
        };
        let sent = self.inner.send(reply);
        let failed = self.replies_failed.clone();
        let mut withdrawn = self.replies_failed.subscribe();
        tokio::spawn(async move {
            tokio::select! {
                result = sent => if result.is_err() {
                    failed.send_replace(true);
                },
                _ = withdrawn.wait_for(|failed| *failed) => {}
            }
            drop(permit);
        });
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for OwnMessagesAnswered<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    /// Cancel-safe, as rmcp needs (it polls this in a `select!`): the only wait is the inner
    /// transport's own `receive`.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.inner.receive().await? {
                JsonRpcMessage::Request(request) => self.answer(request),
                JsonRpcMessage::Notification(_) => {}
                JsonRpcMessage::Response(mut answer) => {
                    if let ServerResult::CustomResult(CustomResult(value)) = &mut answer.result {
                        if let Some(named) = super::bounded::unknown_blocks_named(value) {
                            answer.result = ServerResult::CallToolResult(named);
                        }
                    }
                    return Some(JsonRpcMessage::Response(answer));
                }
                message => return Some(message),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transport whose sends never finish (a server that holds our reply POSTs open), or
    /// fail at once.
    struct Stalled {
        incoming: tokio::sync::mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
        sent: Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
        /// How many of the first sends fail (the rest never finish).
        fail: usize,
    }

    impl Transport<RoleClient> for Stalled {
        type Error = std::io::Error;

        fn send(
            &mut self,
            item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            self.sent
                .lock()
                .unwrap()
                .push(serde_json::to_value(&item).unwrap());
            let fail = self.sent.lock().unwrap().len() <= self.fail;
            async move {
                if fail {
                    return Err(std::io::Error::other("refused"));
                }
                std::future::pending().await
            }
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.incoming.recv().await
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    type Incoming = tokio::sync::mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>;
    type Sent = Arc<std::sync::Mutex<Vec<serde_json::Value>>>;

    fn stalled(fail: usize) -> (OwnMessagesAnswered<Stalled>, Incoming, Sent) {
        let (tx, incoming) = tokio::sync::mpsc::unbounded_channel();
        let sent = Sent::default();
        let transport = OwnMessagesAnswered::new(Stalled {
            incoming,
            sent: sent.clone(),
            fail,
        });
        (transport, tx, sent)
    }

    fn message(tx: &Incoming, v: serde_json::Value) {
        tx.send(serde_json::from_value(v).unwrap()).unwrap();
    }

    /// `pings` pings from the server (ids 0, 1...), then an answer to our request `answer`.
    fn pings_then_an_answer(tx: &Incoming, pings: i64, answer: i64) {
        for i in 0..pings {
            message(
                tx,
                serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "ping"}),
            );
        }
        message(
            tx,
            serde_json::json!({"jsonrpc": "2.0", "id": answer, "result": {}}),
        );
    }

    fn call(id: i64) -> TxJsonRpcMessage<RoleClient> {
        serde_json::from_value(serde_json::json!({"jsonrpc": "2.0", "id": id,
            "method": "tools/call", "params": {"name": "t", "arguments": {}}}))
        .unwrap()
    }

    /// A result with a text block and a block of a kind rmcp does not know.
    fn odd_result(id: i64) -> serde_json::Value {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
            {"type": "text", "text": "kept"}, {"type": "video"}]}})
    }

    #[tokio::test]
    async fn the_servers_own_messages_are_answered_in_bounded_numbers_and_never_passed_on() {
        let (mut transport, tx, sent) = stalled(0);
        drop(transport.send(call(7))); // the call is recorded when sent
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "x/\u{202e}odd"}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "id": "e", "method": "elicitation/create",
            "params": {"message": "Go on?", "requestedSchema": {"type": "object", "properties": {}}}}),
        );
        message(
            &tx,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x"}}),
        );
        for i in 0..200 {
            message(
                &tx,
                serde_json::json!({"jsonrpc": "2.0", "id": 100 + i, "method": "ping"}),
            );
        }
        // The answer to our call, with a content block of an unknown kind: the only message
        // passed on, with that block named.
        message(&tx, odd_result(7));
        let Some(JsonRpcMessage::Response(answer)) = transport.receive().await else {
            panic!("the answer to our request is passed on, and only it");
        };
        let ServerResult::CallToolResult(result) = answer.result else {
            panic!("{:?}", answer.result);
        };
        let texts: Vec<_> = result
            .content
            .iter()
            .map(|c| c.as_text().unwrap().text.clone())
            .collect();
        assert_eq!(texts, ["kept", "[unsupported content block: video]"]);
        tokio::task::yield_now().await;
        let sent = sent.lock().unwrap().clone();
        // sent[0] is the call. Replies are never posted here, so only the first
        // MAX_REPLIES_IN_FLIGHT requests got one.
        assert_eq!(sent.len(), 1 + MAX_REPLIES_IN_FLIGHT);
        assert_eq!(
            sent[1],
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})
        );
        let not_found = |id: serde_json::Value, method: &str| {
            serde_json::json!({"jsonrpc": "2.0",
            "id": id, "error": {"code": -32601,
            "message": format!("Method not found: this client answers only ping, not {method}")}})
        };
        assert_eq!(sent[2], not_found("r".into(), "roots/list"));
        assert_eq!(sent[3], not_found(2.into(), "x/odd"));
        assert_eq!(sent[4], not_found("e".into(), "elicitation/create"));
        assert_eq!(
            sent[5],
            serde_json::json!({"jsonrpc": "2.0", "id": 100, "result": {}})
        );
    }

    #[tokio::test]
    async fn a_listing_is_left_untyped_for_the_catalog() {
        let (mut transport, tx, _sent) = stalled(0);
        let mut listing = odd_result(1);
        // A tool rmcp cannot type: the catalog reads such a listing itself.
        listing["result"]["tools"] = serde_json::json!([{"name": 5}]);
        message(&tx, listing);
        let Some(JsonRpcMessage::Response(answer)) = transport.receive().await else {
            panic!("an answer is passed on");
        };
        assert!(matches!(answer.result, ServerResult::CustomResult(_)));
    }

    #[tokio::test]
    async fn a_failed_reply_withdraws_those_still_waiting() {
        let (mut transport, tx, sent) = stalled(1);
        pings_then_an_answer(&tx, 3, 9);
        assert!(transport.receive().await.is_some());
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        assert_eq!(sent.lock().unwrap().len(), 3);
        // The first reply failed; the two others, which would wait for ever, were withdrawn.
        assert_eq!(transport.replies.available_permits(), MAX_REPLIES_IN_FLIGHT);
    }

    #[tokio::test]
    async fn once_a_reply_cannot_be_posted_no_more_are_tried() {
        let (mut transport, tx, sent) = stalled(usize::MAX);
        for round in 0..2 {
            pings_then_an_answer(&tx, 2, 50 + round);
            assert!(transport.receive().await.is_some());
            tokio::task::yield_now().await; // the reply tasks run: the first one fails
        }
        assert_eq!(
            sent.lock().unwrap().len(),
            2,
            "the two replies of the first round only"
        );
    }
}
