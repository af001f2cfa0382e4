//! Gemini `generateContent` (`POST {base}/models/{model}:generateContent`, streamed as
//! `:streamGenerateContent?alt=sse`). From the neutral form: system messages become
//! `systemInstruction` (one part per text part), user turns keep each text part apart and send
//! `image_url` parts as `inlineData` (a data URL) or `fileData` (an http(s) URL whose type is
//! known), assistant turns become `model` turns with `functionCall` parts, tool messages
//! `functionResponse` parts (named after the call they answer); tools are rendered with
//! [`crate::render::gemini_declaration`]. OpenAI's sampling parameters go into
//! `generationConfig` under Gemini's names and `tool_choice` into `toolConfig`.
//!
//! Gemini gives calls no id (or one only some models send): each call gets a fresh
//! `call_<hex>` id, so that ids stay unique over a run. A call's `thoughtSignature`, which
//! thinking models need back, rides in the OpenAI-shaped call as
//! `extra_content.google.thought_signature` (the key Google's own OpenAI-compatible endpoint
//! uses) and is sent back with it.

use super::assembly::Assembly;
use super::error::{describe, LlmError};
use super::parts::{image_type, parts, refused, texts, Image, Part};
use super::turns::{unknown_role, Turns};
use super::{call_arguments, calls_of, tool_triples, usage, Call, Reply, StreamDecoder};
use serde_json::{json, Map, Value};
use sse_stream::Sse;
use std::collections::HashMap;

pub(super) fn request(
    base_url: &str,
    model: &str,
    call: &Call,
) -> Result<(String, Map<String, Value>), LlmError> {
    let model = model.strip_prefix("models/").unwrap_or(model);
    let url = if call.stream {
        format!("{base_url}/models/{model}:streamGenerateContent?alt=sse")
    } else {
        format!("{base_url}/models/{model}:generateContent")
    };
    let (system, contents) = contents(&call.messages)?;
    let mut body = Map::new();
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": system}));
    }
    body.insert("contents".into(), Value::Array(contents));
    let tools = tool_triples(call)?;
    if !tools.is_empty() {
        let declarations: Vec<Value> = tools
            .into_iter()
            .map(|(n, d, p)| crate::render::gemini_declaration(n, d, p))
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut config = Map::new();
    for (key, value) in &call.params {
        let renamed = match key.as_str() {
            "temperature" | "seed" => key.as_str(),
            "top_p" => "topP",
            "top_k" => "topK",
            "max_tokens" | "max_completion_tokens" => "maxOutputTokens",
            "presence_penalty" => "presencePenalty",
            "frequency_penalty" => "frequencyPenalty",
            "n" => "candidateCount",
            "stop" => {
                let list = if value.is_string() {
                    json!([value])
                } else {
                    value.clone()
                };
                config.insert("stopSequences".into(), list);
                continue;
            }
            "tool_choice" => {
                if !body.contains_key("tools") {
                    continue;
                }
                body.insert("toolConfig".into(), tool_config(value)?);
                continue;
            }
            "parallel_tool_calls" | "stream_options" => continue,
            "generationConfig" => {
                if let Value::Object(given) = value {
                    config.extend(given.clone());
                }
                continue;
            }
            _ => {
                body.insert(key.clone(), value.clone()); // Gemini's own top-level fields
                continue;
            }
        };
        config.insert(renamed.to_string(), value.clone());
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    Ok((url, body))
}

fn tool_config(choice: &Value) -> Result<Value, LlmError> {
    let mode = |m: &str| json!({"functionCallingConfig": {"mode": m}});
    match choice {
        Value::String(s) => match s.as_str() {
            "auto" => Ok(mode("AUTO")),
            "required" => Ok(mode("ANY")),
            "none" => Ok(mode("NONE")),
            other => Err(LlmError::Request(format!(
                "tool_choice {other:?} is not one of \"auto\", \"required\", \"none\""
            ))),
        },
        Value::Object(o) => match o.get("function").and_then(|f| f.get("name")) {
            Some(name) => Ok(
                json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [name]}}),
            ),
            None => Ok(choice.clone()), // already Gemini's shape
        },
        other => Err(LlmError::Request(format!("tool_choice cannot be {other}"))),
    }
}

/// The system parts and the `contents`, consecutive turns of one role merged.
fn contents(neutral: &[Value]) -> Result<(Vec<Value>, Vec<Value>), LlmError> {
    let mut turns = Turns::default();
    let mut names: HashMap<String, String> = HashMap::new();
    for (i, m) in neutral.iter().enumerate() {
        let (role, parts) = match m.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" | "developer" => {
                let texts = texts(m.get("content"), i, "a system message")?;
                turns.system(texts.into_iter().map(|(t, _)| json!({"text": t})));
                continue;
            }
            "user" => ("user", user_parts(m.get("content"), i)?),
            "assistant" => match model_parts(m, i, &mut names)? {
                Some(parts) => ("model", parts),
                None => continue, // an empty reply: Gemini refuses empty turns
            },
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                let name = names.get(id).cloned().unwrap_or_default();
                // The response is one string: several text parts are joined by a blank line.
                let texts = texts(m.get("content"), i, "a tool message sent to Gemini")?;
                let text = texts
                    .iter()
                    .map(|(t, _)| *t)
                    .collect::<Vec<_>>()
                    .join("\n\n");
                let mut response = json!({"name": name, "response": {"content": text}});
                if !id.is_empty() && !id.starts_with("call_") {
                    response["id"] = Value::String(id.to_string()); // an id Gemini gave
                }
                ("user", vec![json!({"functionResponse": response})])
            }
            other => return Err(unknown_role(i, other)),
        };
        turns.push(role, parts);
    }
    Ok(turns.finish("parts"))
}

/// The image types Gemini takes.
const IMAGE_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

fn user_parts(content: Option<&Value>, i: usize) -> Result<Vec<Value>, LlmError> {
    let mut out = Vec::new();
    for part in parts(content, i)? {
        out.push(match part {
            Part::Text("", Some(_)) => continue, // an empty text part of a list
            Part::Text(text, _) => json!({"text": text}),
            Part::Image(image) => image_part(image, i)?,
            Part::Other(kind, _) => {
                return Err(refused(
                    i,
                    "Gemini",
                    format!("a {kind:?} content part (it takes text and image_url parts)"),
                ))
            }
        });
    }
    Ok(out)
}

fn image_part(image: Image<'_>, i: usize) -> Result<Value, LlmError> {
    match image {
        Image::Base64 { media_type, data } => {
            let media_type = image_type(&media_type, &IMAGE_TYPES, "Gemini", i)?;
            Ok(json!({"inlineData": {"mimeType": media_type, "data": data}}))
        }
        Image::Url {
            url,
            media_type: Some(media_type),
        } => {
            let media_type = image_type(&media_type, &IMAGE_TYPES, "Gemini", i)?;
            Ok(json!({"fileData": {"mimeType": media_type, "fileUri": url}}))
        }
        Image::Url {
            url,
            media_type: None,
        } => Err(refused(
            i,
            "Gemini",
            format!(
                "the image URL {url:?} without its type: give a data: URL, a URL whose path \
                 ends in .png, .jpg, .jpeg, .webp, .heic or .heif, or image_url.mime_type"
            ),
        )),
    }
}

fn model_parts(
    m: &Value,
    i: usize,
    names: &mut HashMap<String, String>,
) -> Result<Option<Vec<Value>>, LlmError> {
    let mut parts = Vec::new();
    for (text, _) in texts(m.get("content"), i, "an assistant message")? {
        parts.push(json!({"text": text}));
    }
    for (id, name, call) in calls_of(m) {
        names.insert(id.to_string(), name.to_string());
        let mut function = json!({"name": name, "args": call_arguments(call)});
        if !id.is_empty() && !id.starts_with("call_") {
            function["id"] = Value::String(id.to_string());
        }
        let mut part = json!({"functionCall": function});
        if let Some(sig) = call.pointer("/extra_content/google/thought_signature") {
            part["thoughtSignature"] = sig.clone();
        }
        parts.push(part);
    }
    Ok((!parts.is_empty()).then_some(parts))
}

/// Reads one response (a whole reply, or one chunk of a stream) into `r`.
fn read_chunk(chunk: &Value, r: &mut Assembly, text: &mut Vec<String>) -> Result<(), LlmError> {
    if let Some(err) = chunk.get("error") {
        return Err(LlmError::Reply(format!(
            "the endpoint returned an error: {}",
            describe(err)
        )));
    }
    if let Some(m) = chunk.get("modelVersion").and_then(Value::as_str) {
        r.model = m.to_string();
    }
    if let Some(u) = chunk.get("usageMetadata").and_then(Value::as_object) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let completion =
            n("candidatesTokenCount").map(|c| c + n("thoughtsTokenCount").unwrap_or(0));
        let mut out = usage(n("promptTokenCount"), completion, n("totalTokenCount"));
        out.extend(u.clone());
        r.usage = Some(out);
    }
    let candidate = chunk.pointer("/candidates/0");
    if candidate.is_none() {
        if let Some(reason) = chunk
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            return Err(LlmError::Reply(format!(
                "Gemini blocked the prompt: {reason}"
            )));
        }
    }
    let Some(candidate) = candidate else {
        return Ok(());
    };
    let parts = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        if let Some(call) = part.get("functionCall") {
            let index = next_index(r);
            let id = match call.get("id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => id.to_string(),
                _ => format!("call_{:016x}", super::retry::random_u64()),
            };
            r.call(index, &id, call["name"].as_str().unwrap_or(""));
            let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
            r.arguments(index, &args.to_string());
            if let Some(sig) = part.get("thoughtSignature") {
                r.signature(index, sig.clone());
            }
        } else if part.get("thought") != Some(&Value::Bool(true)) {
            r.text(part.get("text").and_then(Value::as_str).unwrap_or(""), text);
        }
    }
    if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
        r.finish_reason = Some(match reason {
            "STOP" if r.has_calls() => "tool_calls".into(),
            "STOP" => "stop".into(),
            "MAX_TOKENS" => "length".into(),
            other => other.to_ascii_lowercase(),
        });
    }
    Ok(())
}

fn next_index(r: &Assembly) -> u64 {
    r.call_count() as u64
}

pub(super) fn parse(payload: Map<String, Value>) -> Result<Reply, LlmError> {
    let payload = Value::Object(payload);
    if payload.pointer("/candidates/0").is_none() && payload.get("promptFeedback").is_none() {
        return Err(LlmError::Reply("the Gemini reply has no candidates".into()));
    }
    let mut assembly = Assembly::default();
    read_chunk(&payload, &mut assembly, &mut Vec::new())?;
    let mut reply = assembly.finish();
    reply.raw = payload;
    Ok(reply)
}

/// Every event is a whole `GenerateContentResponse` holding the next parts; the stream ends
/// with the body (the last chunk carries `finishReason` and the usage).
#[derive(Default)]
pub(super) struct Decoder {
    reply: Assembly,
}

impl StreamDecoder for Decoder {
    fn event(&mut self, event: &Sse, text: &mut Vec<String>) -> Result<(), LlmError> {
        let data = event.data.as_deref().unwrap_or_default();
        let chunk: Value =
            serde_json::from_str(data).map_err(|_| LlmError::not_json(data.as_bytes()))?;
        read_chunk(&chunk, &mut self.reply, text)
    }

    fn finished(&self) -> bool {
        self.reply.finish_reason.is_some()
    }

    fn finish(self: Box<Self>) -> Reply {
        self.reply.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{build_request, parse_reply, stream_decoder, Provider};
    use super::*;

    #[test]
    fn the_request_has_system_instruction_declarations_and_function_responses() {
        let mut params = Map::new();
        params.insert("temperature".into(), json!(0));
        params.insert("max_tokens".into(), json!(64));
        params.insert("tool_choice".into(), json!("required"));
        let call = Call {
            messages: vec![
                json!({"role": "system", "content": "Be brief."}),
                json!({"role": "user", "content": "Weather?"}),
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "w", "arguments": "{\"city\": \"Oslo\"}"},
                    "extra_content": {"google": {"thought_signature": "sig"}}}]}),
                json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny"}),
            ],
            tools: Some(vec![
                json!({"type": "function", "function": {"name": "w", "description": "Weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": ["string", "null"]}},
                "additionalProperties": false}}}),
            ]),
            params,
            stream: false,
        };
        let req = build_request(
            Provider::Gemini,
            "http://h/v1beta",
            "gemini-2.5-flash",
            Some("k"),
            &call,
        )
        .unwrap();
        assert_eq!(
            req.url,
            "http://h/v1beta/models/gemini-2.5-flash:generateContent"
        );
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Be brief."}]})
        );
        assert_eq!(body["contents"][1]["role"], "model");
        assert_eq!(
            body["contents"][1]["parts"][0]["functionCall"],
            json!({"name": "w", "args": {"city": "Oslo"}})
        );
        assert_eq!(body["contents"][1]["parts"][0]["thoughtSignature"], "sig");
        assert_eq!(
            body["contents"][2]["parts"][0]["functionResponse"],
            json!({"name": "w", "response": {"content": "sunny"}})
        );
        let decl = &body["tools"][0]["functionDeclarations"][0];
        assert_eq!(
            decl["parameters"]["properties"]["city"],
            json!({"type": "string", "nullable": true})
        );
        assert!(decl["parameters"].get("additionalProperties").is_none());
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0, "maxOutputTokens": 64})
        );
        assert_eq!(
            body["toolConfig"],
            json!({"functionCallingConfig": {"mode": "ANY"}})
        );
    }

    #[test]
    fn a_reply_with_function_calls_and_usage() {
        let body = json!({"modelVersion": "gemini-x", "candidates": [{"finishReason": "STOP", "content": {"role": "model",
            "parts": [{"text": "thinking", "thought": true}, {"text": "Both."},
                      {"functionCall": {"name": "w", "args": {"city": "Oslo"}}, "thoughtSignature": "s1"},
                      {"functionCall": {"name": "w", "args": {"city": "Rome"}}}]}}],
            "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10}});
        let reply = parse_reply(Provider::Gemini, body.to_string().as_bytes()).unwrap();
        assert_eq!(reply.content, "Both.");
        assert_eq!(reply.tool_calls.len(), 2);
        assert_eq!(
            reply.tool_calls[1]["function"]["arguments"],
            "{\"city\":\"Rome\"}"
        );
        assert_ne!(reply.tool_calls[0]["id"], reply.tool_calls[1]["id"]);
        assert_eq!(
            reply.tool_calls[0]["extra_content"]["google"]["thought_signature"],
            "s1"
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage.unwrap()["total_tokens"], 10);
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        let err = parse_reply(Provider::Gemini, blocked.to_string().as_bytes()).unwrap_err();
        assert!(err.to_string().contains("SAFETY"));
    }

    #[test]
    fn a_stream_gathers_text_and_calls_from_every_chunk() {
        let chunks = [
            json!({"candidates": [{"content": {"parts": [{"text": "Check"}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"text": "ing."}, {"functionCall": {"name": "a", "args": {}}}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "b", "args": {"x": 1}}}]},
                "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2, "totalTokenCount": 3}}),
        ];
        let mut decoder = stream_decoder(Provider::Gemini);
        let mut text = Vec::new();
        for c in &chunks {
            assert!(!decoder.finished());
            let event = Sse::default().data(c.to_string());
            decoder.event(&event, &mut text).unwrap();
        }
        assert!(decoder.finished());
        let reply = decoder.finish();
        assert_eq!(text, vec!["Check", "ing."]);
        let names: Vec<&str> = reply
            .tool_calls
            .iter()
            .map(|c| c["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, vec!["a", "b"]);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    fn body_of(messages: Vec<Value>) -> Result<Value, String> {
        let call = Call {
            messages,
            ..Call::default()
        };
        let req = build_request(Provider::Gemini, "http://h", "g", None, &call)
            .map_err(|e| e.to_string())?;
        Ok(serde_json::from_slice(&req.body).unwrap())
    }

    #[test]
    fn text_parts_stay_separate_parts_and_images_become_data_parts() {
        let rules =
            json!([{"type": "text", "text": "Rule one."}, {"type": "text", "text": "Rule two."}]);
        let body = body_of(vec![
            json!({"role": "system", "content": rules}),
            json!({"role": "user", "content": [
                {"type": "text", "text": "A"}, {"type": "text", "text": "B"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "https://img.test/a.webp?x=1"}}]}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "w", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": rules}),
        ])
        .unwrap();
        assert_eq!(
            body["systemInstruction"],
            json!({"parts": [{"text": "Rule one."}, {"text": "Rule two."}]})
        );
        assert_eq!(
            body["contents"][0]["parts"],
            json!([{"text": "A"}, {"text": "B"},
                   {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
                   {"fileData": {"mimeType": "image/webp", "fileUri": "https://img.test/a.webp?x=1"}}])
        );
        assert_eq!(
            body["contents"][2]["parts"][0]["functionResponse"]["response"]["content"],
            "Rule one.\n\nRule two."
        );
    }

    #[test]
    fn parts_gemini_cannot_take_are_refused_before_sending() {
        let user =
            |part: Value| body_of(vec![json!({"role": "user", "content": [part]})]).unwrap_err();
        let img = |url: &str| json!({"type": "image_url", "image_url": {"url": url}});
        let err = user(img("https://img.test/photo"));
        assert!(err.contains("message 0: Gemini cannot take the image URL \"https://img.test/photo\" without its type"), "{err}");
        let err = user(img("data:text/plain;base64,aGk="));
        assert!(err.contains("an image of type \"text/plain\""), "{err}");
        let err = user(img("data:image/gif;base64,R0lG"));
        assert!(err.contains("\"image/gif\""), "{err}");
        let err = user(json!({"type": "file", "file": {"file_id": "f"}}));
        assert!(
            err.contains("Gemini cannot take a \"file\" content part"),
            "{err}"
        );
        let typed = json!({"type": "image_url", "image_url": {"url": "https://img.test/photo", "mime_type": "image/png"}});
        let body = body_of(vec![json!({"role": "user", "content": [typed]})]).unwrap();
        assert_eq!(
            body["contents"][0]["parts"][0]["fileData"]["mimeType"],
            "image/png"
        );
        let err = body_of(vec![
            json!({"role": "system", "content": [img("https://img.test/a.png")]}),
        ])
        .unwrap_err();
        assert!(
            err.contains("a system message takes text parts only"),
            "{err}"
        );
    }
}
