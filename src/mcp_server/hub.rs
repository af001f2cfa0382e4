//! The meeting point of the MCP server and its host: calls waiting to be run, their replies,
//! the tool list, and the peers to tell when it changes.

use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ProgressNotificationParam, ProgressToken, Tool,
};
use rmcp::service::{Peer, RoleServer};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_util::sync::CancellationToken;

/// What the server says about itself in `initialize`.
#[derive(Debug, Clone)]
pub struct Identity {
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
}

/// Work for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Run tool `name` with `arguments` (a JSON object, as text) and answer with
    /// [`Hub::reply`] under `id`. `can_elicit` says whether the client takes elicitation
    /// requests (a confirmation can be asked); `progress` whether it asked for progress.
    Call {
        id: u64,
        name: String,
        arguments: String,
        can_elicit: bool,
        progress: bool,
    },
    /// The client cancelled call `id`: stop it (its reply is no longer read).
    Cancel { id: u64 },
}

/// A finished call: the text the client reads, whether it is an error, and the structured
/// result when the tool's return type is typed.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub text: String,
    pub is_error: bool,
    pub structured: Option<serde_json::Value>,
}

struct Pending {
    reply: oneshot::Sender<Reply>,
    peer: Peer<RoleServer>,
    progress: Option<ProgressToken>,
}

/// Shared by the handler (one per client session) and the host.
pub struct Hub {
    identity: Identity,
    events: mpsc::UnboundedSender<Event>,
    queue: tokio::sync::Mutex<mpsc::UnboundedReceiver<Event>>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    tools: RwLock<Arc<Vec<Tool>>>,
    /// Whether a tool list was set (the first one is no change for anyone).
    published: std::sync::atomic::AtomicBool,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Calls running at once; `None` for no limit.
    slots: Option<Arc<Semaphore>>,
    max_calls: usize,
    stop: CancellationToken,
}

impl Hub {
    pub fn new(identity: Identity, max_calls: Option<usize>) -> Arc<Hub> {
        let (events, queue) = mpsc::unbounded_channel();
        Arc::new(Hub {
            identity,
            events,
            queue: tokio::sync::Mutex::new(queue),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            tools: RwLock::new(Arc::new(Vec::new())),
            published: std::sync::atomic::AtomicBool::new(false),
            peers: Mutex::new(Vec::new()),
            slots: max_calls.map(|n| Arc::new(Semaphore::new(n))),
            max_calls: max_calls.unwrap_or(0),
            stop: CancellationToken::new(),
        })
    }

    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Cancelled when the server stops.
    pub fn stop_token(&self) -> &CancellationToken {
        &self.stop
    }

    /// Stop serving: listeners close and [`Hub::next_event`] returns `None`.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// The tools as listed now.
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.tools.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// Replace the tool list; when it differs from the last one, every connected client is
    /// told (`notifications/tools/list_changed`). Returns whether it changed.
    pub fn set_tools(&self, tools: Vec<Tool>) -> bool {
        let Ok(mut slot) = self.tools.write() else {
            return false;
        };
        let first = !self.published.swap(true, Ordering::AcqRel);
        if **slot == tools {
            return first;
        }
        *slot = Arc::new(tools);
        drop(slot);
        if !first {
            let peers = self.peers.lock().map(|p| p.clone()).unwrap_or_default();
            if let Ok(rt) = crate::runtime::shared() {
                rt.spawn(async move {
                    for peer in peers {
                        let _ = peer.notify_tool_list_changed().await;
                    }
                });
            }
        }
        true
    }

    /// A client finished its handshake: it hears about tool list changes from now on.
    pub fn add_peer(&self, peer: Peer<RoleServer>) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.retain(|p| !p.is_transport_closed());
            peers.push(peer);
        }
    }

    /// A slot for one more running call, or `None` when the limit is reached.
    pub fn admit(&self) -> Result<Option<tokio::sync::OwnedSemaphorePermit>, String> {
        match &self.slots {
            None => Ok(None),
            Some(slots) => slots.clone().try_acquire_owned().map(Some).map_err(|_| {
                format!(
                    "Error: the server is already running {} calls, its limit \
                     (max_concurrent_calls); the call was not run. Try again when one finishes.",
                    self.max_calls
                )
            }),
        }
    }

    /// Queue a call for the host; the receiver gets its reply.
    pub fn submit(
        &self,
        name: String,
        arguments: String,
        peer: Peer<RoleServer>,
        progress: Option<ProgressToken>,
    ) -> (u64, oneshot::Receiver<Reply>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let can_elicit = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        let wants_progress = progress.is_some();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                id,
                Pending {
                    reply: tx,
                    peer,
                    progress,
                },
            );
        }
        let _ = self.events.send(Event::Call {
            id,
            name,
            arguments,
            can_elicit,
            progress: wants_progress,
        });
        (id, rx)
    }

    /// The client gave up on call `id`.
    pub fn cancel(&self, id: u64) {
        if self
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(&id))
            .is_some()
        {
            let _ = self.events.send(Event::Cancel { id });
        }
    }

    /// The next call or cancellation for the host; `None` once the server stopped.
    pub async fn next_event(&self) -> Option<Event> {
        let mut queue = self.queue.lock().await;
        tokio::select! {
            event = queue.recv() => event,
            () = self.stop.cancelled() => None,
        }
    }

    /// The host's answer to call `id` (ignored when the call was cancelled).
    pub fn reply(&self, id: u64, reply: Reply) {
        if let Some(pending) = self.pending.lock().ok().and_then(|mut p| p.remove(&id)) {
            let _ = pending.reply.send(reply);
        }
    }

    fn peer_of(&self, id: u64) -> Option<(Peer<RoleServer>, Option<ProgressToken>)> {
        let pending = self.pending.lock().ok()?;
        pending
            .get(&id)
            .map(|p| (p.peer.clone(), p.progress.clone()))
    }

    /// Ask the client of call `id` to approve it (a form elicitation with one boolean,
    /// `approve`). Approved only when the person accepts with `approve` true; a decline, a
    /// cancel, a missing answer or a failed request is a refusal, with the reason.
    pub async fn confirm(&self, id: u64, message: String) -> Result<(), String> {
        let (peer, _) = self
            .peer_of(id)
            .ok_or_else(|| "the call is no longer pending".to_string())?;
        let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {"approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Run this tool call"
                }},
                "required": ["approve"]
            }
        }))
        .map_err(|e| e.to_string())?;
        let answer = peer
            .create_elicitation(params)
            .await
            .map_err(|e| format!("the elicitation request failed: {e}"))?;
        match answer.action {
            ElicitationAction::Accept => {
                let approved = answer
                    .content
                    .as_ref()
                    .and_then(|c| c.get("approve"))
                    .and_then(serde_json::Value::as_bool)
                    == Some(true);
                if approved {
                    Ok(())
                } else {
                    Err("the person did not approve it".into())
                }
            }
            ElicitationAction::Decline => Err("the person declined it".into()),
            _ => Err("the person cancelled it".into()),
        }
    }

    /// Report progress of call `id` to its client, when it asked for progress.
    pub async fn progress(
        &self,
        id: u64,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let Some((peer, Some(token))) = self.peer_of(id) else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        let _ = peer.notify_progress(param).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hub(limit: Option<usize>) -> Arc<Hub> {
        let identity = Identity {
            name: "t".into(),
            version: "1".into(),
            instructions: None,
        };
        Hub::new(identity, limit)
    }

    fn tool(name: &str) -> Tool {
        serde_json::from_value(serde_json::json!({
            "name": name, "inputSchema": {"type": "object"}
        }))
        .unwrap()
    }

    #[test]
    fn the_call_limit_refuses_with_a_clear_text() {
        let hub = hub(Some(1));
        let first = hub.admit().unwrap();
        assert!(first.is_some());
        let refused = hub.admit().unwrap_err();
        assert!(refused.contains("already running 1 calls"), "{refused}");
        drop(first);
        assert!(hub.admit().is_ok());
        assert!(self::hub(None).admit().unwrap().is_none());
    }

    #[test]
    fn only_a_different_tool_list_counts_as_a_change() {
        let hub = hub(None);
        assert!(hub.set_tools(vec![]));
        assert!(!hub.set_tools(vec![]));
        assert!(hub.set_tools(vec![tool("a")]));
        assert!(!hub.set_tools(vec![tool("a")]));
        assert!(hub.set_tools(vec![tool("a"), tool("b")]));
        assert_eq!(hub.tools().len(), 2);
    }

    #[tokio::test]
    async fn a_stopped_hub_hands_out_no_more_events() {
        let hub = hub(None);
        hub.stop();
        assert_eq!(hub.next_event().await, None);
    }
}
