//! A conversation rewritten for a provider that keeps the system text apart from the turns and
//! refuses two turns of one role in a row (Anthropic, Gemini): system texts are collected, each
//! as a block or part of its own, and consecutive messages of one role are merged into one turn.

use super::error::LlmError;
use serde_json::{json, Value};

#[derive(Default)]
pub struct Turns {
    system: Vec<Value>,
    turns: Vec<(&'static str, Vec<Value>)>,
}

impl Turns {
    /// Adds system texts, each already in the provider's block or part form.
    pub fn system(&mut self, blocks: impl IntoIterator<Item = Value>) {
        self.system.extend(blocks);
    }

    /// Adds `items` as a turn of `role`, or to the last turn when it has that role.
    pub fn push(&mut self, role: &'static str, items: Vec<Value>) {
        match self.turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(items),
            _ => self.turns.push((role, items)),
        }
    }

    /// The system blocks and the turns, each `{"role": role, key: items}`.
    pub fn finish(self, key: &str) -> (Vec<Value>, Vec<Value>) {
        let turns = self
            .turns
            .into_iter()
            .map(|(role, items)| json!({"role": role, key: items}))
            .collect();
        (self.system, turns)
    }
}

/// The error for message `index` of a role the neutral form does not have.
pub fn unknown_role(index: usize, role: &str) -> LlmError {
    LlmError::Request(format!(
        "message {index} has role {role:?}; expected system, user, assistant or tool"
    ))
}
