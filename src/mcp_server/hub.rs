//! The meeting point of the MCP server and its host: calls waiting to be run, their replies,
//! the tool list, and the peers to tell when it changes.
//!
//! Asking the person during a call ([`Hub::elicit`], and [`Hub::confirm`] built on it) works
//! in both eras of the protocol: a client that negotiated up to 2025-11-25 is sent an
//! `elicitation/create` request and the call waits for its answer; a 2026-07-28 client gets
//! the call's `input_required` result instead (see [`super::rounds`]) and calls again with
//! the answer, which the next round finds among its answers.

use super::rounds::Rounds;
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequiredResult,
    ProgressNotificationParam, ProgressToken, Tool,
};
use rmcp::service::{Peer, RoleServer};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_util::sync::CancellationToken;

/// The key of the confirmation question in a 2026-07-28 `inputRequests`.
pub const CONFIRM_KEY: &str = "confirm";
/// The key of the question a served `ask_user` call asks (one question per call).
pub const ASK_KEY: &str = "ask_user";

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

/// How the person at the client of a call can be asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Asking {
    /// The client declared no elicitation capability.
    Nobody,
    /// Up to 2025-11-25: an `elicitation/create` request to the client.
    Request,
    /// 2026-07-28: an `input_required` result. `bound` is what its state is bound to (see
    /// [`super::rounds::binding`]); `answers` are the verified answers this round brought.
    Rounds {
        bound: Vec<u8>,
        answers: BTreeMap<String, serde_json::Value>,
    },
}

/// How a call ends: a reply, or (2026-07-28) the questions the client must answer first.
#[derive(Debug)]
pub enum Outcome {
    Done(Reply),
    InputRequired(InputRequiredResult),
}

/// What asking the person gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    /// The person's answer.
    Answer(ElicitResult),
    /// The question went to the client as the call's `input_required` result: the call ends
    /// here, and its reply is no longer read; the client calls again with the answer.
    Asked,
    /// No one could be asked, or the request failed: why.
    Failed(String),
}

struct Pending {
    reply: oneshot::Sender<Outcome>,
    peer: Peer<RoleServer>,
    progress: Option<ProgressToken>,
    asking: Asking,
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
    rounds: Rounds,
}

impl Hub {
    /// Fails only when no random key can be drawn for the `requestState` seal.
    pub fn new(identity: Identity, max_calls: Option<usize>) -> std::io::Result<Arc<Hub>> {
        let (events, queue) = mpsc::unbounded_channel();
        Ok(Arc::new(Hub {
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
            rounds: Rounds::new()?,
        }))
    }

    /// The seal of this server's `requestState` (2026-07-28 rounds).
    pub fn rounds(&self) -> &Rounds {
        &self.rounds
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

    /// Queue a call for the host; the receiver gets how it ends.
    pub fn submit(
        &self,
        name: String,
        arguments: String,
        peer: Peer<RoleServer>,
        progress: Option<ProgressToken>,
        asking: Asking,
    ) -> (u64, oneshot::Receiver<Outcome>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let can_elicit = asking != Asking::Nobody;
        let wants_progress = progress.is_some();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                id,
                Pending {
                    reply: tx,
                    peer,
                    progress,
                    asking,
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

    /// The host's answer to call `id` (ignored when the call was cancelled, or already
    /// answered with questions).
    pub fn reply(&self, id: u64, reply: Reply) {
        if let Some(pending) = self.pending.lock().ok().and_then(|mut p| p.remove(&id)) {
            let _ = pending.reply.send(Outcome::Done(reply));
        }
    }

    fn peer_of(&self, id: u64) -> Option<(Peer<RoleServer>, Option<ProgressToken>)> {
        let pending = self.pending.lock().ok()?;
        pending
            .get(&id)
            .map(|p| (p.peer.clone(), p.progress.clone()))
    }

    /// Ask the person at the client of call `id` the question `params`, filed under `key`
    /// (the key names the question across 2026-07-28 rounds: one key per question a call
    /// asks).
    pub async fn elicit(&self, id: u64, key: &str, params: ElicitRequestParams) -> Elicited {
        let found = self
            .pending
            .lock()
            .ok()
            .and_then(|p| p.get(&id).map(|p| (p.peer.clone(), p.asking.clone())));
        let Some((peer, asking)) = found else {
            return Elicited::Failed("the call is no longer pending".into());
        };
        match asking {
            Asking::Nobody => {
                Elicited::Failed("this MCP client does not support elicitation".into())
            }
            Asking::Request => match peer.create_elicitation(params).await {
                Ok(answer) => Elicited::Answer(answer),
                Err(e) => Elicited::Failed(format!("the elicitation request failed: {e}")),
            },
            Asking::Rounds { bound, answers } => match answers.get(key) {
                Some(answer) => match serde_json::from_value(answer.clone()) {
                    Ok(answer) => Elicited::Answer(answer),
                    Err(e) => Elicited::Failed(format!(
                        "the client's answer to '{key}' is not an elicitation result: {e}"
                    )),
                },
                None => {
                    let questions = BTreeMap::from([(key.to_string(), params)]);
                    let asked = match self.rounds.ask(&bound, answers, questions) {
                        Ok(asked) => asked,
                        Err(e) => return Elicited::Failed(format!("cannot ask: {e}")),
                    };
                    match self.pending.lock().ok().and_then(|mut p| p.remove(&id)) {
                        Some(pending) => {
                            let _ = pending.reply.send(Outcome::InputRequired(asked));
                            Elicited::Asked
                        }
                        None => Elicited::Failed("the call is no longer pending".into()),
                    }
                }
            },
        }
    }

    /// Ask the client of call `id` to approve it (a form elicitation with one boolean,
    /// `approve`). Approved only when the person accepts with `approve` true; a decline, a
    /// cancel, a missing answer, a failed request, or a question that went out as the call's
    /// `input_required` result (the call is not run this round) is a refusal, with the reason.
    pub async fn confirm(&self, id: u64, message: String) -> Result<(), String> {
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
        let answer = self.answer_to(id, CONFIRM_KEY, params).await?;
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

    /// [`Hub::elicit`], with the question sent as the call's `input_required` result or a
    /// failure both as `Err` (the call does not go on this round).
    async fn answer_to(
        &self,
        id: u64,
        key: &str,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, String> {
        match self.elicit(id, key, params).await {
            Elicited::Answer(answer) => Ok(answer),
            Elicited::Asked => Err("the client was asked; it calls again with the answer".into()),
            Elicited::Failed(why) => Err(why),
        }
    }

    /// Ask the person at the client of call `id` the model's `question` (a served `ask_user`
    /// call), offering `choices` as the answer's options when given. `Ok(answer)` when the
    /// person accepts with a string; a decline, a cancel, a failed request, or a question that
    /// went out as the call's `input_required` result is `Err` with the reason.
    pub async fn ask(
        &self,
        id: u64,
        question: String,
        choices: Option<Vec<String>>,
    ) -> Result<String, String> {
        let mut answer_schema = serde_json::json!({"type": "string", "title": "Answer"});
        if let Some(choices) = choices.filter(|c| !c.is_empty()) {
            answer_schema["enum"] = serde_json::json!(choices);
        }
        let params: ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "mode": "form",
            "message": question,
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": answer_schema},
                "required": ["answer"]
            }
        }))
        .map_err(|e| e.to_string())?;
        let answer = self.answer_to(id, ASK_KEY, params).await?;
        match answer.action {
            ElicitationAction::Accept => answer
                .content
                .as_ref()
                .and_then(|c| c.get("answer"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| "the person's answer is not a string".to_string()),
            ElicitationAction::Decline => Err("the person declined to answer".into()),
            _ => Err("the person cancelled the question".into()),
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
        Hub::new(identity, limit).unwrap()
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
