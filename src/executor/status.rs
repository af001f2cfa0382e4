//! The status a tool call ends with, as the run's record shows it.

use crate::response::ToolStatus;

/// How one call of a run ended: the tool's own status for a call that ran, or the gate that
/// refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallStatus {
    Success,
    Partial,
    Error,
    /// The call overran its timeout.
    Timeout,
    /// The tool raised RetryAgentRun.
    Retry,
    /// The tool raised StopAgentRun.
    Stopped,
    /// No id or no function name.
    InvalidCall,
    /// Arguments that are not a JSON object.
    InvalidArgs,
    UnknownTool,
    Denied,
    /// The arguments failed validation.
    Invalid,
    NotConfirmed,
    /// The run stopped before the call's turn came.
    Skipped,
    /// The run paused for a person's decision on this call (`confirm="pause"`).
    Pending,
    /// A guardrail refused the call or its result, failed, or tripped.
    Guardrail,
}

impl CallStatus {
    /// Every status, in declaration order (`ALL[s as usize] == s`).
    pub const ALL: [CallStatus; 15] = [
        CallStatus::Success,
        CallStatus::Partial,
        CallStatus::Error,
        CallStatus::Timeout,
        CallStatus::Retry,
        CallStatus::Stopped,
        CallStatus::InvalidCall,
        CallStatus::InvalidArgs,
        CallStatus::UnknownTool,
        CallStatus::Denied,
        CallStatus::Invalid,
        CallStatus::NotConfirmed,
        CallStatus::Skipped,
        CallStatus::Pending,
        CallStatus::Guardrail,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Success => "success",
            CallStatus::Partial => "partial",
            CallStatus::Error => "error",
            CallStatus::Timeout => "timeout",
            CallStatus::Retry => "retry",
            CallStatus::Stopped => "stopped",
            CallStatus::InvalidCall => "invalid_call",
            CallStatus::InvalidArgs => "invalid_args",
            CallStatus::UnknownTool => "unknown_tool",
            CallStatus::Denied => "denied",
            CallStatus::Invalid => "invalid",
            CallStatus::NotConfirmed => "not_confirmed",
            CallStatus::Skipped => "skipped",
            CallStatus::Pending => "pending",
            CallStatus::Guardrail => "guardrail",
        }
    }
}

impl From<ToolStatus> for CallStatus {
    fn from(status: ToolStatus) -> Self {
        match status {
            ToolStatus::Success => CallStatus::Success,
            ToolStatus::Partial => CallStatus::Partial,
            ToolStatus::Error => CallStatus::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_each_status_at_its_own_index() {
        for (i, status) in CallStatus::ALL.iter().enumerate() {
            assert_eq!(*status as usize, i, "{}", status.as_str());
        }
    }

    #[test]
    fn tool_statuses_keep_their_words() {
        for s in [ToolStatus::Success, ToolStatus::Partial, ToolStatus::Error] {
            assert_eq!(CallStatus::from(s).as_str(), s.as_str());
        }
        assert_eq!(CallStatus::NotConfirmed.as_str(), "not_confirmed");
    }
}
