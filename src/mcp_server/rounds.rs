//! Asking the person on MCP 2026-07-28 (SEP-2322 multi round-trip requests).
//!
//! From protocol 2026-07-28 on, a server sends no requests of its own: a call that needs the
//! person answers with an `input_required` result (`inputRequests`: elicitation requests by
//! key, and a `requestState`), and the client calls again with the same arguments plus
//! `inputResponses` (the answers by key) and the `requestState` echoed back.
//!
//! The server keeps nothing between rounds: everything it needs travels in `requestState`,
//! sealed by rmcp's [`RequestStateCodec`] (HMAC-SHA256) under a key drawn at random when the
//! server starts, and bound (as associated data, never stored in it) to the tool name and the
//! call's argument digest ([`crate::executor::call_digest`]). So a retry is refused when its
//! state was forged or altered, comes from another server process (or an earlier run of this
//! one), is older than [`STATE_TTL`], or arrives with other arguments or for another tool.
//! The state lists the keys that were asked (an answer to a question never asked is dropped)
//! and carries the answers of earlier rounds, so a call may ask several questions in turn.
//!
//! Replaying a state with the same arguments is allowed until it expires: the answers in it
//! came from the same client, which could give them again.

use rmcp::model::{
    ElicitRequestParams, ErrorData, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a `requestState` stays valid: a person may take a while to answer.
pub const STATE_TTL: Duration = Duration::from_secs(3600);

/// What the server remembers across rounds (sealed, so the client can read it but not change
/// it).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Remembered {
    /// The keys asked in the last round: only answers under these keys are taken.
    pub asked: Vec<String>,
    /// The answers of earlier rounds, by key.
    pub answers: BTreeMap<String, Value>,
}

/// Seals and opens the `requestState` of one server.
pub struct Rounds {
    codec: RequestStateCodec,
}

/// What a state is bound to: the tool name, a NUL, the call's argument digest.
pub fn binding(tool: &str, arguments: &Value) -> Vec<u8> {
    let mut bound = tool.as_bytes().to_vec();
    bound.push(0);
    bound.extend(crate::executor::call_digest(tool, arguments).into_bytes());
    bound
}

fn refused(why: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "the requestState of this retry is refused: {why}. Call the tool again without \
             inputResponses and requestState to be asked anew."
        ),
        None,
    )
}

impl Rounds {
    /// A server's sealer, with a fresh random key.
    pub fn new() -> std::io::Result<Rounds> {
        let mut key = [0u8; 32];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut key)?;
        let codec = RequestStateCodec::try_new(key.to_vec()).map_err(std::io::Error::other)?;
        Ok(Rounds { codec })
    }

    /// The answers a retry brings: the earlier rounds' answers from its state, plus its
    /// `inputResponses` to the keys the state says were asked. A first call (no state, no
    /// responses) has none; a state that does not open for this tool and these arguments, or
    /// responses without a state, is refused.
    pub fn answers(
        &self,
        bound: &[u8],
        state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<BTreeMap<String, Value>, ErrorData> {
        let Some(state) = state else {
            return match responses {
                Some(_) => Err(refused(
                    "inputResponses came without the requestState this server sent with its \
                     questions",
                )),
                None => Ok(BTreeMap::new()),
            };
        };
        let remembered: Remembered =
            self.codec
                .open_json_with(state, bound)
                .map_err(|e| match e {
                    rmcp::model::RequestStateError::Expired => refused("it has expired"),
                    _ => refused(
                        "it was not issued by this server process for this tool with these \
                     arguments (forged, altered, from another server process, or the \
                     arguments changed)",
                    ),
                })?;
        let mut answers = remembered.answers;
        for (key, answer) in responses.into_iter().flatten() {
            if remembered.asked.contains(key) {
                answers.insert(key.clone(), answer.clone());
            }
        }
        Ok(answers)
    }

    /// The `input_required` result asking `questions` (elicitation requests by key), with a
    /// state remembering them and the answers so far.
    pub fn ask(
        &self,
        bound: &[u8],
        answers: BTreeMap<String, Value>,
        questions: BTreeMap<String, ElicitRequestParams>,
    ) -> Result<InputRequiredResult, String> {
        let remembered = Remembered {
            asked: questions.keys().cloned().collect(),
            answers,
        };
        let mut requests = InputRequests::new();
        for (key, params) in questions {
            let request = serde_json::json!({"method": "elicitation/create", "params": params});
            let request: InputRequest =
                serde_json::from_value(request).map_err(|e| e.to_string())?;
            requests.insert(key, request);
        }
        let options = SealOptions::new().associated_data(bound).ttl(STATE_TTL);
        let state = self
            .codec
            .seal_json_with(&remembered, &options)
            .map_err(|e| e.to_string())?;
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

/// The call's arguments as the JSON value their digest is taken over.
pub fn arguments_value(arguments: Option<&Map<String, Value>>) -> Value {
    Value::Object(arguments.cloned().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn question() -> BTreeMap<String, ElicitRequestParams> {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": "Approve?",
            "requestedSchema": {"type": "object", "properties": {"approve": {"type": "boolean"}}}
        }))
        .unwrap();
        BTreeMap::from([("confirm".to_string(), params)])
    }

    fn state_of(result: &InputRequiredResult) -> String {
        result.request_state.clone().unwrap()
    }

    fn yes() -> InputResponses {
        BTreeMap::from([(
            "confirm".to_string(),
            json!({"action": "accept", "content": {"approve": true}}),
        )])
    }

    #[test]
    fn a_round_brings_back_the_answer_to_what_was_asked() {
        let rounds = Rounds::new().unwrap();
        let bound = binding("wipe", &json!({"path": "/tmp/x"}));
        let asked = rounds.ask(&bound, BTreeMap::new(), question()).unwrap();
        let wire = serde_json::to_value(&asked).unwrap();
        assert_eq!(wire["resultType"], "input_required");
        assert_eq!(
            wire["inputRequests"]["confirm"]["method"],
            "elicitation/create"
        );
        assert_eq!(
            wire["inputRequests"]["confirm"]["params"]["message"],
            "Approve?"
        );
        let mut responses = yes();
        responses.insert("never_asked".into(), json!({"action": "accept"}));
        let answers = rounds
            .answers(&bound, Some(&state_of(&asked)), Some(&responses))
            .unwrap();
        assert_eq!(answers, yes());
        assert!(rounds.answers(&bound, None, None).unwrap().is_empty());
    }

    #[test]
    fn earlier_answers_travel_in_the_state() {
        let rounds = Rounds::new().unwrap();
        let bound = binding("t", &json!({}));
        let second = rounds
            .ask(
                &bound,
                yes(),
                BTreeMap::from([("more".to_string(), question().remove("confirm").unwrap())]),
            )
            .unwrap();
        let answers = rounds
            .answers(&bound, Some(&state_of(&second)), None)
            .unwrap();
        assert_eq!(answers, yes());
    }

    #[test]
    fn other_arguments_another_tool_a_forged_state_or_another_server_are_refused() {
        let rounds = Rounds::new().unwrap();
        let bound = binding("wipe", &json!({"path": "/tmp/x"}));
        let state = state_of(&rounds.ask(&bound, BTreeMap::new(), question()).unwrap());
        let refusal = |bound: &[u8], state: &str, rounds: &Rounds| {
            rounds
                .answers(bound, Some(state), Some(&yes()))
                .unwrap_err()
                .message
                .to_string()
        };
        let other_args = binding("wipe", &json!({"path": "/etc"}));
        assert!(refusal(&other_args, &state, &rounds).contains("the arguments changed"));
        let other_tool = binding("wipe2", &json!({"path": "/tmp/x"}));
        assert!(refusal(&other_tool, &state, &rounds).contains("is refused"));
        let mut tampered = state.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        assert!(refusal(&bound, &tampered, &rounds).contains("forged, altered"));
        assert!(refusal(&bound, "made-up", &rounds).contains("forged, altered"));
        let another_server = Rounds::new().unwrap();
        assert!(refusal(&bound, &state, &another_server).contains("from another server process"));
        let no_state = rounds.answers(&bound, None, Some(&yes())).unwrap_err();
        assert!(no_state.message.contains("without the requestState"));
        assert_eq!(no_state.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }
}
