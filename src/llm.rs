//! Model endpoints: the wire formats of OpenAI chat completions (and every server that speaks
//! it), Anthropic Messages and Gemini `generateContent`, and the HTTP client that sends them.
//!
//! The agent speaks one neutral form, OpenAI's: messages with `role`/`content`, assistant
//! messages that carry `tool_calls`, `role: "tool"` messages with `tool_call_id`, and tools as
//! the OpenAI function list. Each codec translates that form into its provider's request and
//! the provider's reply (whole or streamed) back into a [`Reply`] whose tool calls are in the
//! OpenAI shape again. Tool schemas are re-rendered with [`crate::render`], never by hand.

mod anthropic;
mod assembly;
mod error;
mod gemini;
mod openai;
mod parts;
mod reasoning;
pub mod retry;
mod transport;
mod turns;

pub use error::{LlmError, Phase};
pub use transport::{Endpoint, EndpointOptions, ReplyStream};

use serde_json::{Map, Value};
use sse_stream::Sse;

/// Which wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Provider {
    /// The provider named `name` (`"openai"`, `"anthropic"`, `"gemini"`; any case).
    pub fn parse(name: &str) -> Result<Provider, String> {
        match name.to_ascii_lowercase().as_str() {
            "openai" => Ok(Provider::OpenAi),
            "anthropic" => Ok(Provider::Anthropic),
            "gemini" | "google" => Ok(Provider::Gemini),
            _ => Err(format!(
                "unknown provider {name:?}: use \"openai\" (also for OpenAI-compatible servers), \
                 \"anthropic\" or \"gemini\""
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }

    /// The name used in error messages.
    pub fn title(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI-compatible",
            Provider::Anthropic => "Anthropic",
            Provider::Gemini => "Gemini",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com/v1",
            Provider::Gemini => "https://generativelanguage.googleapis.com/v1beta",
        }
    }

    /// The environment variable the key is read from when none is given.
    pub fn key_variable(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::Gemini => "GEMINI_API_KEY",
        }
    }
}

/// One model call in the neutral (OpenAI) form.
#[derive(Debug, Clone, Default)]
pub struct Call {
    pub messages: Vec<Value>,
    /// The OpenAI function list (`{"type": "function", "function": {...}}` entries).
    pub tools: Option<Vec<Value>>,
    /// Everything else the caller sends (`temperature`, `max_tokens`, `tool_choice`, ...), in
    /// OpenAI's names; each codec maps the ones its provider names differently.
    pub params: Map<String, Value>,
    pub stream: bool,
}

/// An HTTP request ready to send (and to send again on a retry).
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// One reply in the neutral form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub content: String,
    /// OpenAI-shaped: `{"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}`.
    pub tool_calls: Vec<Value>,
    /// `prompt_tokens`, `completion_tokens`, `total_tokens` (plus what the provider adds).
    pub usage: Option<Map<String, Value>>,
    /// In OpenAI's words: `stop`, `tool_calls`, `length`, ...
    pub finish_reason: Option<String>,
    pub model: String,
    /// Provider fields of the assistant message the agent should keep (reasoning text, ...).
    pub extra: Map<String, Value>,
    /// The whole reply as received (for a stream: null).
    pub raw: Value,
}

impl Reply {
    /// The reply as one JSON object (what the binding hands to Python).
    pub fn into_value(self) -> Value {
        let mut out = Map::with_capacity(7);
        out.insert("content".into(), Value::String(self.content));
        let calls = (!self.tool_calls.is_empty()).then_some(Value::Array(self.tool_calls));
        out.insert("tool_calls".into(), calls.unwrap_or(Value::Null));
        out.insert(
            "usage".into(),
            self.usage.map(Value::Object).unwrap_or(Value::Null),
        );
        out.insert(
            "finish_reason".into(),
            self.finish_reason.map(Value::String).unwrap_or(Value::Null),
        );
        out.insert("model".into(), Value::String(self.model));
        let extra = (!self.extra.is_empty()).then_some(Value::Object(self.extra));
        out.insert("extra".into(), extra.unwrap_or(Value::Null));
        out.insert("raw".into(), self.raw);
        Value::Object(out)
    }
}

/// The request for `call` to the endpoint at `base_url` (no trailing slash) for `model`.
pub fn build_request(
    provider: Provider,
    base_url: &str,
    model: &str,
    key: Option<&str>,
    call: &Call,
) -> Result<HttpRequest, LlmError> {
    let (url, body) = match provider {
        Provider::OpenAi => openai::request(base_url, model, call)?,
        Provider::Anthropic => anthropic::request(base_url, model, call)?,
        Provider::Gemini => gemini::request(base_url, model, call)?,
    };
    let mut headers = vec![("content-type", "application/json".to_string())];
    headers.push((
        "accept",
        if call.stream {
            "text/event-stream"
        } else {
            "application/json"
        }
        .to_string(),
    ));
    match (provider, key.filter(|k| !k.is_empty())) {
        (Provider::OpenAi, Some(key)) => headers.push(("authorization", format!("Bearer {key}"))),
        (Provider::Anthropic, key) => {
            headers.push(("anthropic-version", anthropic::VERSION.to_string()));
            if let Some(key) = key {
                headers.push(("x-api-key", key.to_string()));
            }
        }
        (Provider::Gemini, Some(key)) => headers.push(("x-goog-api-key", key.to_string())),
        _ => {}
    }
    let body = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| LlmError::Request(format!("the request cannot be written as JSON: {e}")))?;
    Ok(HttpRequest { url, headers, body })
}

/// Parses a whole (not streamed) reply body.
pub fn parse_reply(provider: Provider, body: &[u8]) -> Result<Reply, LlmError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| LlmError::not_json(body))?;
    let Value::Object(payload) = value else {
        return Err(LlmError::Reply(format!(
            "a reply must be a JSON object, got {}",
            error::kind(&value)
        )));
    };
    if let Some(err) = payload.get("error") {
        if !payload.contains_key("choices") && !payload.contains_key("candidates") {
            return Err(LlmError::Reply(format!(
                "the endpoint returned an error: {}",
                error::describe(err)
            )));
        }
    }
    match provider {
        Provider::OpenAi => openai::parse(payload),
        Provider::Anthropic => anthropic::parse(payload),
        Provider::Gemini => gemini::parse(payload),
    }
}

/// What turns a provider's server-sent events (as [`crate::sse::model_events`] reads them: each
/// has data) into text deltas and, at the end, a [`Reply`].
pub trait StreamDecoder: Send {
    /// Handles one event; text deltas go to `text`.
    fn event(&mut self, event: &Sse, text: &mut Vec<String>) -> Result<(), LlmError>;
    /// Whether the provider said the stream is over (a later end of the body is expected).
    fn finished(&self) -> bool;
    /// The reply assembled from every event.
    fn finish(self: Box<Self>) -> Reply;
}

pub fn stream_decoder(provider: Provider) -> Box<dyn StreamDecoder> {
    match provider {
        Provider::OpenAi => Box::new(openai::Decoder::default()),
        Provider::Anthropic => Box::new(anthropic::Decoder::default()),
        Provider::Gemini => Box::new(gemini::Decoder::default()),
    }
}

/// The tools of `call` as (name, description, parameters) triples, for codecs that render them
/// in another shape. A tool not in the OpenAI function shape is an error.
fn tool_triples(call: &Call) -> Result<Vec<(&str, &str, &Value)>, LlmError> {
    static EMPTY: Value = Value::Null;
    let Some(tools) = &call.tools else {
        return Ok(Vec::new());
    };
    tools
        .iter()
        .map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    LlmError::Request(format!(
                        "a tool must be an OpenAI function entry with a name, got {tool}"
                    ))
                })?;
            let description = function
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            let parameters = function.get("parameters").unwrap_or(&EMPTY);
            Ok((name, description, parameters))
        })
        .collect()
}

/// The text of an OpenAI reply's `content` (a string, or a list of text parts, read as one
/// text). Requests never glue parts this way: see [`parts`].
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// The arguments of an OpenAI-shaped tool call as a JSON object (what Anthropic and Gemini
/// take): unparsable or non-object arguments become `{}`, as the model's call could not have
/// been run with them anyway.
fn call_arguments(call: &Value) -> Value {
    let args = call.pointer("/function/arguments");
    let parsed = match args {
        Some(Value::String(text)) => serde_json::from_str(text).ok(),
        Some(Value::Object(o)) => Some(Value::Object(o.clone())),
        _ => None,
    };
    match parsed {
        Some(Value::Object(o)) => Value::Object(o),
        _ => Value::Object(Map::new()),
    }
}

/// The tool calls of a neutral assistant message: each call's id and function name (empty
/// when missing) with the call itself.
fn calls_of(message: &Value) -> impl Iterator<Item = (&str, &str, &Value)> {
    fn field<'a>(call: &'a Value, pointer: &str) -> &'a str {
        call.pointer(pointer).and_then(Value::as_str).unwrap_or("")
    }
    message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(move |call| (field(call, "/id"), field(call, "/function/name"), call))
}

/// An OpenAI-shaped tool call.
fn tool_call(id: &str, name: &str, arguments: String) -> Value {
    serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// `usage` in OpenAI's names from a prompt and a completion count (the provider's own fields
/// ride along).
fn usage(prompt: Option<u64>, completion: Option<u64>, total: Option<u64>) -> Map<String, Value> {
    let mut out = Map::with_capacity(3);
    let (p, c) = (prompt.unwrap_or(0), completion.unwrap_or(0));
    out.insert("prompt_tokens".into(), p.into());
    out.insert("completion_tokens".into(), c.into());
    out.insert("total_tokens".into(), total.unwrap_or(p + c).into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn providers_parse_by_name_and_unknown_ones_are_listed() {
        assert_eq!(Provider::parse("OpenAI").unwrap(), Provider::OpenAi);
        assert_eq!(Provider::parse("gemini").unwrap(), Provider::Gemini);
        let err = Provider::parse("cohere").unwrap_err();
        assert!(err.contains("\"anthropic\""), "{err}");
    }

    #[test]
    fn each_provider_gets_its_key_header_and_no_header_without_a_key() {
        let call = Call {
            messages: vec![json!({"role": "user", "content": "hi"})],
            ..Call::default()
        };
        let names = |p, key| -> Vec<&'static str> {
            build_request(p, "http://h", "m", key, &call)
                .unwrap()
                .headers
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert!(names(Provider::OpenAi, Some("k")).contains(&"authorization"));
        assert!(!names(Provider::OpenAi, None).contains(&"authorization"));
        assert!(!names(Provider::OpenAi, Some("")).contains(&"authorization"));
        let anthropic = names(Provider::Anthropic, Some("k"));
        assert!(anthropic.contains(&"x-api-key") && anthropic.contains(&"anthropic-version"));
        assert!(names(Provider::Gemini, Some("k")).contains(&"x-goog-api-key"));
    }

    #[test]
    fn error_bodies_and_non_json_are_reported() {
        let err = parse_reply(Provider::OpenAi, b"<html>").unwrap_err();
        assert!(err.to_string().contains("did not return JSON"), "{err}");
        let err = parse_reply(Provider::Anthropic, br#"{"error": "quota"}"#).unwrap_err();
        assert!(err.to_string().contains("returned an error"), "{err}");
        let err = parse_reply(Provider::Gemini, b"[1]").unwrap_err();
        assert!(err.to_string().contains("JSON object"), "{err}");
    }

    #[test]
    fn arguments_that_are_not_an_object_become_an_empty_one() {
        let call = |args: Value| json!({"function": {"name": "f", "arguments": args}});
        assert_eq!(call_arguments(&call(json!("{\"a\": 1}"))), json!({"a": 1}));
        assert_eq!(call_arguments(&call(json!("not json"))), json!({}));
        assert_eq!(call_arguments(&call(json!("[1]"))), json!({}));
    }
}
