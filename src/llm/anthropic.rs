//! Anthropic Messages (`POST {base}/messages`). From the neutral form: system messages go to
//! the top-level `system` (one text block per text part); an assistant's tool calls become
//! `tool_use` blocks, after the `thinking` / `redacted_thinking` blocks of the reply that made
//! them (kept as [`super::reasoning`] parts), and tool messages `tool_result` blocks of a user
//! turn (consecutive turns of one role are merged, so the results of parallel calls travel
//! together); `image_url` parts become `image` blocks; tools are rendered with
//! [`crate::render::anthropic_tool`]. `max_tokens`, which Anthropic requires, defaults to
//! [`DEFAULT_MAX_TOKENS`]; OpenAI's `stop`, `tool_choice` and `parallel_tool_calls` are mapped.

use super::assembly::Assembly;
use super::error::{describe, LlmError};
use super::parts::{image_type, parts, refused, texts, Image, Part, Text};
use super::reasoning;
use super::turns::{unknown_role, Turns};
use super::{call_arguments, calls_of, tool_call, tool_triples, usage, Call, Reply, StreamDecoder};
use serde_json::{json, Map, Value};
use sse_stream::Sse;

/// The `anthropic-version` header sent with every request unless the client's own `headers`
/// give another.
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
    match system.as_slice() {
        [] => {}
        // One plain text block reads best as the string form.
        [only] if only.as_object().is_some_and(|o| o.len() == 2) => {
            body.insert("system".into(), only["text"].clone());
        }
        _ => {
            body.insert("system".into(), Value::Array(system));
        }
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

/// The system blocks and the turns, merged by role.
fn messages(neutral: &[Value]) -> Result<(Vec<Value>, Vec<Value>), LlmError> {
    let mut turns = Turns::default();
    for (i, m) in neutral.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let (role, blocks) = match role {
            "system" | "developer" => {
                let texts = texts(m.get("content"), i, "a system message")?;
                turns.system(texts.into_iter().map(text_block));
                continue;
            }
            "user" => ("user", content_blocks(m.get("content"), i)?),
            "assistant" => match assistant_blocks(m, i)? {
                Some(blocks) => ("assistant", blocks),
                None => continue, // an empty reply: Anthropic refuses empty turns
            },
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                let content = match m.get("content") {
                    Some(Value::String(s)) => Value::String(s.clone()),
                    None | Some(Value::Null) => Value::String(String::new()),
                    other => Value::Array(content_blocks(other, i)?),
                };
                let block = json!({"type": "tool_result", "tool_use_id": id, "content": content});
                ("user", vec![block])
            }
            other => return Err(unknown_role(i, other)),
        };
        turns.push(role, blocks);
    }
    Ok(turns.finish("content"))
}

/// A text block; a part's `cache_control` rides along.
fn text_block((text, part): Text<'_>) -> Value {
    let mut block = json!({"type": "text", "text": text});
    if let Some(cache) = part.and_then(|p| p.get("cache_control")) {
        block["cache_control"] = cache.clone();
    }
    block
}

/// The image types Anthropic takes.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Anthropic's own block types a user turn or a tool result may hold, passed through.
const OWN_BLOCKS: [&str; 3] = ["image", "document", "search_result"];

/// The blocks of a user or tool message's content.
fn content_blocks(content: Option<&Value>, i: usize) -> Result<Vec<Value>, LlmError> {
    let mut blocks = Vec::new();
    for part in parts(content, i)? {
        let block = match part {
            // An empty text part of a list is left out (Anthropic refuses empty text blocks).
            Part::Text("", Some(_)) => continue,
            Part::Text(text, part) => text_block((text, part)),
            Part::Image(image) => image_block(image, i)?,
            Part::Other(kind, block) if OWN_BLOCKS.contains(&kind) => block.clone(),
            Part::Other(kind, _) => {
                return Err(refused(
                    i,
                    "Anthropic",
                    format!(
                        "a {kind:?} content part (it takes text and image_url parts, and its own \
                         image, document and search_result blocks)"
                    ),
                ))
            }
        };
        blocks.push(block);
    }
    Ok(blocks)
}

fn image_block(image: Image<'_>, i: usize) -> Result<Value, LlmError> {
    Ok(match image {
        Image::Base64 { media_type, data } => {
            let media_type = image_type(&media_type, &IMAGE_TYPES, "Anthropic", i)?;
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        Image::Url { url, media_type } => {
            if let Some(media_type) = media_type {
                image_type(&media_type, &IMAGE_TYPES, "Anthropic", i)?;
            }
            json!({"type": "image", "source": {"type": "url", "url": url}})
        }
    })
}

/// The reasoning blocks the reply kept, its text and its tool calls, in the reply's order (the
/// reasoning first unless the reply had it later: see [`reasoning`]).
fn assistant_blocks(m: &Value, i: usize) -> Result<Option<Vec<Value>>, LlmError> {
    let texts: Vec<Value> = texts(m.get("content"), i, "an assistant message")?
        .into_iter()
        .map(text_block)
        .collect();
    let calls: Vec<Value> = calls_of(m)
        .map(|(id, name, call)| {
            json!({"type": "tool_use", "id": id, "name": name, "input": call_arguments(call)})
        })
        .collect();
    if texts.is_empty() && calls.is_empty() {
        return Ok(None);
    }
    let kept = reasoning::parts_for(m, i, "anthropic")?;
    if let Some(bad) = kept.parts.iter().find(|b| !is_reasoning(b)) {
        return Err(LlmError::Request(format!(
            "message {i}: Anthropic's provider_reasoning parts are thinking and \
             redacted_thinking blocks, got {bad}"
        )));
    }
    Ok(Some(kept.arrange(texts, calls)))
}

/// Where a block of type `kind` sits in a [`reasoning`] layout (blocks the neutral form does
/// not keep have no place).
fn layout_entry(kind: Option<&str>) -> Option<&'static str> {
    match kind? {
        "thinking" | "redacted_thinking" => Some(reasoning::REASONING),
        "text" => Some(reasoning::TEXT),
        "tool_use" => Some(reasoning::CALL),
        _ => None,
    }
}

fn is_reasoning(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
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
    let mut thinking = Vec::new();
    let mut layout = Vec::new();
    for block in blocks {
        let kind = block.get("type").and_then(Value::as_str);
        layout.extend(layout_entry(kind));
        match kind {
            Some("thinking" | "redacted_thinking") => thinking.push(block.clone()),
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
    reasoning::keep(&mut reply.extra, "anthropic", thinking, layout);
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
                if let Some(entry) = layout_entry(block["type"].as_str()) {
                    r.layout(index, entry);
                }
                match block["type"].as_str() {
                    Some("tool_use") => r.call(
                        index,
                        block["id"].as_str().unwrap_or(""),
                        block["name"].as_str().unwrap_or(""),
                    ),
                    Some("text") => r.text(block["text"].as_str().unwrap_or(""), text),
                    Some("thinking" | "redacted_thinking") => {
                        r.reasoning(index, "anthropic", block.clone())
                    }
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
                    Some("thinking_delta") => {
                        let piece = delta["thinking"].as_str().unwrap_or("");
                        r.reasoning_text(index, "thinking", piece)
                    }
                    Some("signature_delta") => {
                        let piece = delta["signature"].as_str().unwrap_or("");
                        r.reasoning_text(index, "signature", piece)
                    }
                    _ => {}
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
mod tests;
