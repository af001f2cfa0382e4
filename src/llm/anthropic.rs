//! Anthropic Messages (`POST {base}/messages`). From the neutral form: system messages go to
//! the top-level `system`; an assistant's tool calls become `tool_use` blocks and tool messages
//! `tool_result` blocks of a user turn (consecutive turns of one role are merged, so the
//! results of parallel calls travel together); tools are rendered with
//! [`crate::render::anthropic_tool`]. `max_tokens`, which Anthropic requires, defaults to
//! [`DEFAULT_MAX_TOKENS`]; OpenAI's `stop`, `tool_choice` and `parallel_tool_calls` are mapped.

use super::assembly::Assembly;
use super::error::{describe, LlmError};
use super::turns::{unknown_role, Turns};
use super::{
    call_arguments, calls_of, text_of, tool_call, tool_triples, usage, Call, Reply, StreamDecoder,
};
use serde_json::{json, Map, Value};
use sse_stream::Sse;

/// The `anthropic-version` header sent with every request.
pub(super) const VERSION: &str = "2023-06-01";
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

pub(super) fn request(
    base_url: &str,
    model: &str,
    call: &Call,
) -> Result<(String, Map<String, Value>), LlmError> {
    let (system, messages) = messages(&call.messages)?;
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_string()));
    if !system.is_empty() {
        body.insert("system".into(), Value::String(system));
    }
    body.insert("messages".into(), Value::Array(messages));
    let mut params = call.params.clone();
    let parallel = params.remove("parallel_tool_calls");
    let choice = params.remove("tool_choice");
    if let Some(max) = params.remove("max_completion_tokens") {
        params.entry("max_tokens").or_insert(max);
    }
    if let Some(stop) = params.remove("stop") {
        let list = if stop.is_string() {
            json!([stop])
        } else {
            stop
        };
        params.insert("stop_sequences".into(), list);
    }
    params.remove("stream_options");
    body.insert("max_tokens".into(), DEFAULT_MAX_TOKENS.into());
    body.extend(params);
    let tools = tool_triples(call)?;
    if !tools.is_empty() {
        let rendered = tools
            .into_iter()
            .map(|(n, d, p)| crate::render::anthropic_tool(n, d, p.clone()))
            .collect();
        body.insert("tools".into(), Value::Array(rendered));
        if let Some(choice) = tool_choice(choice.as_ref(), parallel.as_ref())? {
            body.insert("tool_choice".into(), choice);
        }
    }
    if call.stream {
        body.insert("stream".into(), Value::Bool(true));
    }
    Ok((format!("{base_url}/messages"), body))
}

/// OpenAI's `tool_choice` (`auto`, `required`, `none`, a named function) and
/// `parallel_tool_calls: false` in Anthropic's words.
fn tool_choice(
    choice: Option<&Value>,
    parallel: Option<&Value>,
) -> Result<Option<Value>, LlmError> {
    let mut out = match choice {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(match s.as_str() {
            "auto" => json!({"type": "auto"}),
            "required" | "any" => json!({"type": "any"}),
            "none" => json!({"type": "none"}),
            other => {
                return Err(LlmError::Request(format!(
                    "tool_choice {other:?} is not one of \"auto\", \"required\", \"none\""
                )))
            }
        }),
        Some(Value::Object(o)) => match o.pointer_name() {
            Some(name) => Some(json!({"type": "tool", "name": name})),
            None => Some(Value::Object(o.clone())), // already Anthropic's shape
        },
        Some(other) => {
            return Err(LlmError::Request(format!("tool_choice cannot be {other}")));
        }
    };
    if parallel == Some(&Value::Bool(false)) {
        let choice = out.get_or_insert_with(|| json!({"type": "auto"}));
        if choice["type"] != "none" {
            choice["disable_parallel_tool_use"] = Value::Bool(true);
        }
    }
    Ok(out)
}

trait FunctionName {
    fn pointer_name(&self) -> Option<&str>;
}

impl FunctionName for Map<String, Value> {
    /// The name of an OpenAI `{"type": "function", "function": {"name"}}` choice.
    fn pointer_name(&self) -> Option<&str> {
        self.get("function")?.get("name")?.as_str()
    }
}

/// The system text and the turns, merged by role.
fn messages(neutral: &[Value]) -> Result<(String, Vec<Value>), LlmError> {
    let mut turns = Turns::default();
    for (i, m) in neutral.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let (role, blocks) = match role {
            "system" | "developer" => {
                turns.system(text_of(m.get("content")));
                continue;
            }
            "user" => ("user", user_blocks(m.get("content"))),
            "assistant" => match assistant_blocks(m) {
                Some(blocks) => ("assistant", blocks),
                None => continue, // an empty reply: Anthropic refuses empty turns
            },
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                let block = json!({"type": "tool_result", "tool_use_id": id,
                                   "content": text_of(m.get("content"))});
                ("user", vec![block])
            }
            other => return Err(unknown_role(i, other)),
        };
        turns.push(role, blocks);
    }
    Ok(turns.finish("content"))
}

fn user_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        // Parts given as blocks (text, or Anthropic's own image blocks) pass through.
        Some(Value::Array(parts)) => parts.clone(),
        other => vec![json!({"type": "text", "text": text_of(other)})],
    }
}

fn assistant_blocks(m: &Value) -> Option<Vec<Value>> {
    let mut blocks = Vec::new();
    let text = text_of(m.get("content"));
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for (id, name, call) in calls_of(m) {
        blocks.push(
            json!({"type": "tool_use", "id": id, "name": name, "input": call_arguments(call)}),
        );
    }
    (!blocks.is_empty()).then_some(blocks)
}

fn finish_reason(stop: &str) -> String {
    match stop {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" => "length",
        "tool_use" => "tool_calls",
        other => other,
    }
    .to_string()
}

/// Anthropic's usage in OpenAI's names; cached input counts as prompt tokens.
fn read_usage(u: &Map<String, Value>, prompt_before: Option<u64>) -> Map<String, Value> {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let prompt = match (n("input_tokens"), prompt_before) {
        (None, before) => before,
        (Some(input), _) => Some(
            input
                + n("cache_creation_input_tokens").unwrap_or(0)
                + n("cache_read_input_tokens").unwrap_or(0),
        ),
    };
    let mut out = usage(prompt, n("output_tokens"), None);
    for (k, v) in u {
        out.entry(k.clone()).or_insert_with(|| v.clone());
    }
    out
}

pub(super) fn parse(payload: Map<String, Value>) -> Result<Reply, LlmError> {
    let Some(Value::Array(blocks)) = payload.get("content") else {
        return Err(LlmError::Reply(
            "the Anthropic reply has no content list".into(),
        ));
    };
    let mut reply = Reply::default();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => reply.content.push_str(block["text"].as_str().unwrap_or("")),
            Some("tool_use") => {
                let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
                let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
                reply
                    .tool_calls
                    .push(tool_call(s("id"), s("name"), input.to_string()));
            }
            _ => {}
        }
    }
    reply.usage = payload
        .get("usage")
        .and_then(Value::as_object)
        .map(|u| read_usage(u, None));
    reply.finish_reason = payload
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(finish_reason);
    reply.model = payload
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .into();
    reply.raw = Value::Object(payload);
    Ok(reply)
}

/// `message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
/// `message_stop`, `ping` and `error` events.
#[derive(Default)]
pub(super) struct Decoder {
    reply: Assembly,
    done: bool,
}

impl StreamDecoder for Decoder {
    fn event(&mut self, event: &Sse, text: &mut Vec<String>) -> Result<(), LlmError> {
        let text_data = event.data.as_deref().unwrap_or_default();
        let data: Value = serde_json::from_str(text_data)
            .map_err(|_| LlmError::not_json(text_data.as_bytes()))?;
        let r = &mut self.reply;
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.event.as_deref().unwrap_or_default())
        {
            "message_start" => {
                let message = &data["message"];
                r.model = message["model"].as_str().unwrap_or("").to_string();
                if let Some(u) = message.get("usage").and_then(Value::as_object) {
                    r.usage = Some(read_usage(u, None));
                }
            }
            "content_block_start" => {
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("tool_use") => r.call(
                        index,
                        block["id"].as_str().unwrap_or(""),
                        block["name"].as_str().unwrap_or(""),
                    ),
                    Some("text") => r.text(block["text"].as_str().unwrap_or(""), text),
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => r.text(delta["text"].as_str().unwrap_or(""), text),
                    Some("input_json_delta") => {
                        r.arguments(index, delta["partial_json"].as_str().unwrap_or(""))
                    }
                    _ => {} // thinking and signature deltas
                }
            }
            "message_delta" => {
                if let Some(stop) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    r.finish_reason = Some(finish_reason(stop));
                }
                if let Some(u) = data.get("usage").and_then(Value::as_object) {
                    let before = r.usage.as_ref().and_then(|u| u["prompt_tokens"].as_u64());
                    r.usage = Some(read_usage(u, before));
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                return Err(LlmError::Reply(format!(
                    "the stream reported an error: {}",
                    describe(data.get("error").unwrap_or(&data))
                )))
            }
            _ => {} // ping, content_block_stop
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn finish(self: Box<Self>) -> Reply {
        self.reply.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{build_request, parse_reply, stream_decoder, Provider};
    use super::*;

    fn body_of(call: &Call) -> Value {
        let req = build_request(
            Provider::Anthropic,
            "http://h/v1",
            "claude",
            Some("k"),
            call,
        )
        .unwrap();
        assert_eq!(req.url, "http://h/v1/messages");
        serde_json::from_slice(&req.body).unwrap()
    }

    #[test]
    fn system_apart_tool_use_and_merged_tool_results() {
        let call = Call {
            messages: vec![
                json!({"role": "system", "content": "Be brief."}),
                json!({"role": "user", "content": "Weather?"}),
                json!({"role": "assistant", "content": "", "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "w", "arguments": "{\"city\": \"Oslo\"}"}},
                    {"id": "b", "type": "function", "function": {"name": "w", "arguments": "{\"city\": \"Rome\"}"}}]}),
                json!({"role": "tool", "tool_call_id": "a", "content": "sunny"}),
                json!({"role": "tool", "tool_call_id": "b", "content": "rain"}),
            ],
            tools: Some(vec![
                json!({"type": "function", "function": {"name": "w", "description": "Weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}),
            ]),
            ..Call::default()
        };
        let body = body_of(&call);
        assert_eq!(body["system"], "Be brief.");
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(
            msgs[1]["content"][0],
            json!({"type": "tool_use", "id": "a", "name": "w", "input": {"city": "Oslo"}})
        );
        assert_eq!(msgs[2]["role"], "user");
        assert_eq!(
            msgs[2]["content"][1],
            json!({"type": "tool_result", "tool_use_id": "b", "content": "rain"})
        );
        assert_eq!(
            body["tools"][0]["input_schema"]["properties"]["city"]["type"],
            "string"
        );
        assert_eq!(body["tools"][0]["name"], "w");
    }

    #[test]
    fn an_empty_assistant_turn_is_left_out_and_the_user_turns_merge() {
        let call = Call {
            messages: vec![
                json!({"role": "user", "content": "a"}),
                json!({"role": "assistant", "content": ""}),
                json!({"role": "user", "content": "b"}),
            ],
            ..Call::default()
        };
        assert_eq!(
            body_of(&call)["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}])
        );
    }

    #[test]
    fn openai_parameters_are_mapped() {
        let mut params = Map::new();
        params.insert(
            "tool_choice".into(),
            json!({"type": "function", "function": {"name": "w"}}),
        );
        params.insert("parallel_tool_calls".into(), json!(false));
        params.insert("stop".into(), json!("END"));
        params.insert("max_tokens".into(), json!(10));
        let call = Call {
            messages: vec![json!({"role": "user", "content": "x"})],
            tools: Some(vec![json!({"type": "function", "function": {"name": "w"}})]),
            params,
            stream: true,
        };
        let body = body_of(&call);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": "w", "disable_parallel_tool_use": true})
        );
        assert_eq!(body["stop_sequences"], json!(["END"]));
        assert_eq!(body["max_tokens"], 10);
        assert_eq!(body["stream"], true);
        assert!(body.get("parallel_tool_calls").is_none());
    }

    #[test]
    fn a_reply_with_tool_use_becomes_openai_calls() {
        let body = json!({"model": "claude", "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2},
            "content": [{"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "t1", "name": "w", "input": {"city": "Oslo"}}]});
        let reply = parse_reply(Provider::Anthropic, body.to_string().as_bytes()).unwrap();
        assert_eq!(reply.content, "Checking.");
        assert_eq!(
            reply.tool_calls[0]["function"]["arguments"],
            "{\"city\":\"Oslo\"}"
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        let usage = reply.usage.unwrap();
        assert_eq!(
            (
                usage["prompt_tokens"].as_u64(),
                usage["total_tokens"].as_u64()
            ),
            (Some(12), Some(17))
        );
    }

    #[test]
    fn a_stream_joins_partial_json_per_block() {
        let events = [
            json!({"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 9, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "On it"}}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "w", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": "}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"Oslo\"}"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
            json!({"type": "message_stop"}),
        ];
        let mut decoder = stream_decoder(Provider::Anthropic);
        let mut text = Vec::new();
        for e in &events {
            let ev = Sse::default()
                .event(e["type"].as_str().unwrap())
                .data(e.to_string());
            decoder.event(&ev, &mut text).unwrap();
        }
        assert!(decoder.finished());
        let reply = decoder.finish();
        assert_eq!(text, vec!["On it"]);
        assert_eq!(
            reply.tool_calls[0]["function"]["arguments"],
            "{\"city\": \"Oslo\"}"
        );
        let usage = reply.usage.unwrap();
        assert_eq!(
            (
                usage["prompt_tokens"].as_u64(),
                usage["completion_tokens"].as_u64()
            ),
            (Some(9), Some(20))
        );
        let mut decoder = stream_decoder(Provider::Anthropic);
        let err = Sse::default().event("error").data(
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                .to_string(),
        );
        let e = decoder.event(&err, &mut text).unwrap_err();
        assert!(
            e.to_string().contains("overloaded_error: Overloaded"),
            "{e}"
        );
    }
}
