//! The texts and the input schema of `ask_user`, the tool through which the model asks the
//! person a question (`UserInputTool` in Python, which holds the callback or pauses the run).
//!
//! Decisions: a question is a non-empty string; `choices`, when given, are 1 to 20 non-empty
//! strings, shown to the person as options, and the person may still answer otherwise (the
//! answer is passed on as given). An empty answer tells the model that none was given.

use crate::prompts::Prompts;
use serde_json::{json, Value};

pub const PROMPTS: &[(&str, &str)] = &[
    (
        "tool.desc.ask_user",
        "Ask the person you are working for a question and wait for their answer. Use it only for information or a decision that only they can give; offer choices when the answer is one of a few options.",
    ),
    ("tool.param.ask_user.question", "The question, complete and self-contained"),
    ("tool.param.ask_user.choices", "Optional: the answers to choose from (the person may still answer otherwise)"),
    ("tool.msg.ask_user.answer", "The person answered: {answer}"),
    ("tool.msg.ask_user.no_answer", "(the person gave no answer)"),
    ("tool.msg.ask_user.unanswered", "(the question was not answered: {reason})"),
    ("tool.msg.ask_user.bad_answer", "Error: no answer could be obtained (the answer callback returned {kind}, not a string)"),
    (
        "tool.msg.ask_user.no_run",
        "Error: ask_user waits for the person by pausing an agent run; called outside one, it has no one to ask",
    ),
];

/// At most this many choices.
pub const MAX_CHOICES: usize = 20;

/// The root input schema of `ask_user`.
pub fn input_schema(p: &Prompts) -> Value {
    json!({
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "minLength": 1,
                "description": p.get("tool.param.ask_user.question"),
            },
            "choices": {
                "type": ["array", "null"],
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_CHOICES,
                "description": p.get("tool.param.ask_user.choices"),
            },
        },
        "required": ["question"],
        "additionalProperties": false,
    })
}

/// What the model reads for the person's answer.
pub fn answer_text(p: &Prompts, answer: &str) -> String {
    if answer.trim().is_empty() {
        p.get("tool.msg.ask_user.no_answer").to_string()
    } else {
        p.fmt("tool.msg.ask_user.answer", &[("answer", answer)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_and_schema() {
        let p = Prompts::new(PROMPTS, None).unwrap();
        assert_eq!(answer_text(&p, "Paris"), "The person answered: Paris");
        assert_eq!(answer_text(&p, "  "), "(the person gave no answer)");
        let schema = input_schema(&p);
        assert_eq!(schema["required"], json!(["question"]));
        assert_eq!(schema["properties"]["choices"]["maxItems"], json!(20));
    }
}
