//! The value every tool call produces.

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// Outcome of a tool call as the model and the trace see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// The call did what was asked.
    Success,
    /// The call succeeded but the result is incomplete (for example truncated output).
    Partial,
    /// The call failed; the text says why so the model can adjust and retry.
    Error,
}

impl ToolStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Success => "success",
            ToolStatus::Partial => "partial",
            ToolStatus::Error => "error",
        }
    }

    /// Parses the exact lowercase words; anything else is refused (a typo such as "ok" or
    /// "Success" would otherwise silently become a wrong status in every trace).
    pub fn parse(word: &str) -> Option<ToolStatus> {
        match word {
            "success" => Some(ToolStatus::Success),
            "partial" => Some(ToolStatus::Partial),
            "error" => Some(ToolStatus::Error),
            _ => None,
        }
    }
}

impl fmt::Display for ToolStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of a tool call: `text` is what the model reads, `data` is for programs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResponse {
    pub text: String,
    pub status: ToolStatus,
    pub data: Option<Value>,
}

impl ToolResponse {
    pub fn new(text: impl Into<String>, status: ToolStatus) -> Self {
        ToolResponse {
            text: text.into(),
            status,
            data: None,
        }
    }

    pub fn ok(text: impl Into<String>) -> Self {
        Self::new(text, ToolStatus::Success)
    }

    pub fn partial(text: impl Into<String>) -> Self {
        Self::new(text, ToolStatus::Partial)
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self::new(text, ToolStatus::Error)
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn is_error(&self) -> bool {
        self.status == ToolStatus::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constructors_set_status() {
        assert_eq!(ToolResponse::ok("a").status, ToolStatus::Success);
        assert_eq!(ToolResponse::partial("a").status, ToolStatus::Partial);
        assert!(ToolResponse::error("a").is_error());
        assert_eq!(
            ToolResponse::ok("42").with_data(json!(42)).data,
            Some(json!(42))
        );
    }

    #[test]
    fn status_parse_is_exact() {
        for word in ["success", "partial", "error"] {
            assert_eq!(ToolStatus::parse(word).unwrap().as_str(), word);
        }
        for bad in ["ok", "Success", "", "error "] {
            assert_eq!(ToolStatus::parse(bad), None);
        }
    }
}
