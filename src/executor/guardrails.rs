//! Guardrails: the texts the model reads when a guardrail refuses a call or its result, fails,
//! or trips (ends the run).
//!
//! Input guardrails see a call after parsing, permissions and validation and before
//! confirmation; output guardrails see the whole result before the `max_result_chars` cut and
//! the external-content frame (see [`super::cut`], [`super::finish`]). The guardrails
//! themselves are the caller's callables; what their decisions become is decided here.

/// Where a guardrail looks: at the call, or at its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Input,
    Output,
}

impl Stage {
    pub fn parse(word: &str) -> Option<Stage> {
        match word {
            "input" => Some(Stage::Input),
            "output" => Some(Stage::Output),
            _ => None,
        }
    }
}

/// What a guardrail's verdict ends in for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It refused, with a message for the model.
    Refused,
    /// It raised: the call (or its result) is refused, the run goes on.
    Failed,
    /// It tripped: the run ends.
    Tripped,
}

impl Verdict {
    pub fn parse(word: &str) -> Option<Verdict> {
        match word {
            "refuse" => Some(Verdict::Refused),
            "fail" => Some(Verdict::Failed),
            "trip" => Some(Verdict::Tripped),
            _ => None,
        }
    }
}

/// The text the model reads in place of the call's result. `detail` is the guardrail's message
/// (refused, tripped) or its exception as `Type: message` (failed).
pub fn text(name: &str, stage: Stage, verdict: Verdict, detail: &str) -> String {
    let detail = detail.trim();
    match (stage, verdict) {
        (Stage::Input, Verdict::Refused) => {
            format!("Error: a guardrail refused the call to tool '{name}': {detail} The call was not executed.")
        }
        (Stage::Output, Verdict::Refused) => {
            format!("Error: a guardrail withheld the result of tool '{name}': {detail}")
        }
        (Stage::Input, Verdict::Failed) => format!(
            "Error: a guardrail checking the call to tool '{name}' failed ({detail}); the call was not executed."
        ),
        (Stage::Output, Verdict::Failed) => format!(
            "Error: a guardrail checking the result of tool '{name}' failed ({detail}); the result was withheld."
        ),
        (_, Verdict::Tripped) => {
            format!("Error: a guardrail stopped the run at tool '{name}': {detail}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_decision_has_its_words() {
        assert_eq!(
            text("rm", Stage::Input, Verdict::Refused, "no deleting on Fridays."),
            "Error: a guardrail refused the call to tool 'rm': no deleting on Fridays. The call was not executed."
        );
        assert_eq!(
            text("read", Stage::Output, Verdict::Refused, " it holds a key "),
            "Error: a guardrail withheld the result of tool 'read': it holds a key"
        );
        assert_eq!(
            text("read", Stage::Output, Verdict::Failed, "KeyError: 'x'"),
            "Error: a guardrail checking the result of tool 'read' failed (KeyError: 'x'); the result was withheld."
        );
        assert!(text("t", Stage::Input, Verdict::Failed, "E: m")
            .ends_with("the call was not executed."));
        assert_eq!(
            text("t", Stage::Input, Verdict::Tripped, "injection"),
            "Error: a guardrail stopped the run at tool 't': injection"
        );
        assert_eq!(Stage::parse("output"), Some(Stage::Output));
        assert_eq!(Verdict::parse("nope"), None);
    }
}
