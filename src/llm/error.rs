//! What can go wrong with a model call, worded for the person reading the traceback.

use serde_json::Value;
use std::fmt;

/// Which timeout ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Connect,
    Read,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    /// The server answered with an error status (after the retries it was worth).
    Status {
        provider: &'static str,
        status: u16,
        /// The provider's own message, from its error body (or the body's start).
        message: String,
        attempts: u32,
        /// The body as received (at most a few KB).
        body: String,
    },
    /// A timeout ran out.
    Timeout {
        phase: Phase,
        seconds: f64,
        url: String,
        attempts: u32,
    },
    /// No connection could be made, or it broke.
    Unreachable {
        url: String,
        reason: String,
        attempts: u32,
    },
    /// The reply is not one the codec can read.
    Reply(String),
    /// The call cannot be sent as given.
    Request(String),
}

/// The most of a body kept in an error.
const BODY_EXCERPT: usize = 2000;

impl LlmError {
    pub fn not_json(body: &[u8]) -> LlmError {
        let text = String::from_utf8_lossy(&body[..body.len().min(500)]);
        LlmError::Reply(format!("the endpoint did not return JSON: {}", text.trim()))
    }

    /// The HTTP status, where the server sent one.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The response body, where there was one.
    pub fn body(&self) -> Option<&str> {
        match self {
            LlmError::Status { body, .. } => Some(body),
            _ => None,
        }
    }

    /// A status error from a response body in any provider's error shape.
    pub fn from_status(provider: &'static str, status: u16, body: &[u8], attempts: u32) -> Self {
        let cut = &body[..body.len().min(BODY_EXCERPT)];
        let body = String::from_utf8_lossy(cut).into_owned();
        LlmError::Status {
            provider,
            status,
            message: provider_message(cut),
            attempts,
            body,
        }
    }

    /// Every occurrence of `secret` replaced (a provider may echo a bad key back).
    pub fn redacted(self, secret: Option<&str>) -> Self {
        let Some(secret) = secret.filter(|s| s.len() >= 4) else {
            return self;
        };
        let hide = |s: String| s.replace(secret, "[redacted]");
        match self {
            LlmError::Status {
                provider,
                status,
                message,
                attempts,
                body,
            } => LlmError::Status {
                provider,
                status,
                message: hide(message),
                attempts,
                body: hide(body),
            },
            LlmError::Unreachable {
                url,
                reason,
                attempts,
            } => LlmError::Unreachable {
                url: hide(url),
                reason: hide(reason),
                attempts,
            },
            LlmError::Reply(m) => LlmError::Reply(hide(m)),
            other => other,
        }
    }
}

/// The message of an error body: OpenAI and Gemini `{"error": {"message"}}`, Anthropic
/// `{"type": "error", "error": {"type", "message"}}`, a bare `{"error": "text"}` or
/// `{"message"}`; else the body's start.
fn provider_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let value = match &value {
            Value::Array(items) if !items.is_empty() => &items[0], // Gemini streams errors so
            _ => &value,
        };
        if let Some(err) = value.get("error") {
            return describe(err);
        }
        if let Some(Value::String(m)) = value.get("message") {
            return m.clone();
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        "(empty body)".to_string()
    } else {
        text.chars().take(500).collect()
    }
}

/// An error object's text: its `message` (with its `type` or `status` before it), else itself.
pub(super) fn describe(err: &Value) -> String {
    match err {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let message = o.get("message").and_then(Value::as_str);
            let kind = o
                .get("type")
                .or_else(|| o.get("status"))
                .and_then(Value::as_str);
            match (kind, message) {
                (Some(k), Some(m)) => format!("{k}: {m}"),
                (None, Some(m)) => m.to_string(),
                _ => err.to_string(),
            }
        }
        other => other.to_string(),
    }
}

pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn attempts(n: u32) -> String {
    if n == 1 {
        "1 attempt".to_string()
    } else {
        format!("{n} attempts")
    }
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Status {
                provider,
                status,
                message,
                attempts: n,
                ..
            } => write!(
                f,
                "{provider} request failed with HTTP {status}: {message} (after {})",
                attempts(*n)
            ),
            LlmError::Timeout {
                phase: Phase::Connect,
                seconds,
                url,
                attempts: n,
            } => write!(
                f,
                "the connect timeout ({seconds}s) ran out: no connection to {url} (after {})",
                attempts(*n)
            ),
            LlmError::Timeout {
                phase: Phase::Read,
                seconds,
                url,
                attempts: n,
            } => write!(
                f,
                "the read timeout ({seconds}s) ran out: {url} sent nothing for {seconds}s \
                 (after {})",
                attempts(*n)
            ),
            LlmError::Unreachable {
                url,
                reason,
                attempts: n,
            } => write!(
                f,
                "could not reach {url}: {reason} (after {})",
                attempts(*n)
            ),
            LlmError::Reply(m) | LlmError::Request(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for LlmError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_providers_error_shape_yields_its_message() {
        let openai = br#"{"error": {"message": "Rate limit reached", "type": "requests"}}"#;
        let anthropic =
            br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
        let gemini =
            br#"{"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(provider_message(openai), "requests: Rate limit reached");
        assert_eq!(provider_message(anthropic), "overloaded_error: Overloaded");
        assert_eq!(provider_message(gemini), "RESOURCE_EXHAUSTED: Quota");
        assert_eq!(provider_message(b"  gateway down \n"), "gateway down");
        assert_eq!(provider_message(b""), "(empty body)");
    }

    #[test]
    fn the_final_error_names_status_message_and_attempts() {
        let err = LlmError::from_status("Anthropic", 529, br#"{"error": {"message": "busy"}}"#, 3);
        assert_eq!(
            err.to_string(),
            "Anthropic request failed with HTTP 529: busy (after 3 attempts)"
        );
        assert_eq!(err.status(), Some(529));
    }

    #[test]
    fn a_key_echoed_by_the_provider_is_redacted() {
        let body = br#"{"error": {"message": "Incorrect API key provided: sk-secret-123"}}"#;
        let err = LlmError::from_status("OpenAI", 401, body, 1).redacted(Some("sk-secret-123"));
        let text = format!("{err} {:?}", err.body());
        assert!(
            !text.contains("sk-secret-123") && text.contains("[redacted]"),
            "{text}"
        );
    }

    #[test]
    fn timeouts_say_which_one_ran_out() {
        let err = |phase| LlmError::Timeout {
            phase,
            seconds: 0.5,
            url: "http://h/v1".into(),
            attempts: 1,
        };
        assert!(err(Phase::Read)
            .to_string()
            .starts_with("the read timeout (0.5s)"));
        assert!(err(Phase::Connect)
            .to_string()
            .starts_with("the connect timeout"));
    }
}
