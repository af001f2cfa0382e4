//! The texts and the input schema of an agent offered as a tool (`Agent.as_tool` in Python,
//! which runs the sub-agent inside the calling run).
//!
//! Decisions: the sub-agent reads only the `input` the model writes (not the caller's
//! conversation), so the description says to make it self-contained; its final answer is the
//! result; a run that ran out of turns is a partial result; nesting past the tool's
//! `max_depth` is refused before the sub-agent starts, so an agent given itself cannot recurse
//! without end.

use crate::prompts::Prompts;
use serde_json::{json, Value};

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "tool.desc.agent",
        "Hand a task to the agent {name}: it works on it with its own tools and replies with its answer. It does not see this conversation, so put everything it needs in input.",
    ),
    ("tool.param.agent.input", "The task, complete and self-contained"),
    (
        "tool.msg.agent.too_deep",
        "Error: {name} was not started: agents are already nested {depth} deep here, the most allowed (max_depth={max}). Do this part yourself.",
    ),
    ("tool.msg.agent.failed", "Error: the agent {name} failed: {error}"),
    (
        "tool.msg.agent.paused",
        "Error: the agent {name} paused: {count} of its calls wait for a person's decision (its paused RunResult is this result's data; resume it with Agent.resume)",
    ),
];

/// The default nesting limit: a top-level run, and agents three deep below it.
pub const DEFAULT_MAX_DEPTH: u32 = 3;

/// The root input schema of an agent tool.
pub fn input_schema(p: &Prompts) -> Value {
    json!({
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "minLength": 1,
                "description": p.get("tool.param.agent.input"),
            },
        },
        "required": ["input"],
        "additionalProperties": false,
    })
}

/// The default description of the agent `name` as a tool.
pub fn description(p: &Prompts, name: &str) -> String {
    p.fmt("tool.desc.agent", &[("name", name)])
}

/// The refusal of a call that would nest agents `depth + 1` deep, past `max`.
pub fn too_deep(p: &Prompts, name: &str, depth: u32, max: u32) -> String {
    p.fmt(
        "tool.msg.agent.too_deep",
        &[
            ("name", name),
            ("depth", &depth.to_string()),
            ("max", &max.to_string()),
        ],
    )
}

/// A sub-agent's run that ended with an error of its own.
pub fn failed(p: &Prompts, name: &str, error: &str) -> String {
    p.fmt("tool.msg.agent.failed", &[("name", name), ("error", error)])
}

/// A sub-agent run, started outside an agent run, that paused on `count` calls.
pub fn paused(p: &Prompts, name: &str, count: usize) -> String {
    p.fmt(
        "tool.msg.agent.paused",
        &[("name", name), ("count", &count.to_string())],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_and_schema() {
        let p = Prompts::new(PROMPTS, None).unwrap();
        assert!(description(&p, "researcher").starts_with("Hand a task to the agent researcher: "));
        assert_eq!(
            too_deep(&p, "researcher", 3, 3),
            "Error: researcher was not started: agents are already nested 3 deep here, the most allowed (max_depth=3). Do this part yourself."
        );
        assert_eq!(failed(&p, "r", "boom"), "Error: the agent r failed: boom");
        assert!(paused(&p, "r", 2).starts_with("Error: the agent r paused: 2 of its calls wait"));
        assert_eq!(input_schema(&p)["required"], json!(["input"]));
    }
}
