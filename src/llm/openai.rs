//! OpenAI chat completions (`POST {base}/chat/completions`), which vLLM, Ollama, llama.cpp's
//! server and most gateways speak too. The neutral form is this one, so the request passes
//! messages and tools through (less the reasoning parts another provider's replies left in the
//! history, which this wire has no field for); a stream asks for usage in its last chunk.

use super::assembly::Assembly;
use super::error::LlmError;
use super::{reasoning, text_of, usage, Call, Reply, StreamDecoder};
use serde_json::{Map, Value};
use sse_stream::Sse;

pub(super) fn request(
    base_url: &str,
    model: &str,
    call: &Call,
) -> Result<(String, Map<String, Value>), LlmError> {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_string()));
    let messages = reasoning::without(&call.messages).into_owned();
    body.insert("messages".into(), Value::Array(messages));
    for (k, v) in &call.params {
        body.insert(k.clone(), v.clone());
    }
    if let Some(tools) = call.tools.as_ref().filter(|t| !t.is_empty()) {
        body.insert("tools".into(), Value::Array(tools.clone()));
    }
    if call.stream {
        body.insert("stream".into(), Value::Bool(true));
        body.entry("stream_options")
            .or_insert_with(|| serde_json::json!({"include_usage": true}));
    }
    Ok((format!("{base_url}/chat/completions"), body))
}

pub(super) fn parse(payload: Map<String, Value>) -> Result<Reply, LlmError> {
    let choice = match payload.get("choices") {
        Some(Value::Array(choices)) => choices.first().and_then(Value::as_object),
        _ => None,
    }
    .ok_or_else(|| LlmError::Reply("the chat completion has no choices".into()))?;
    let message = choice
        .get("message")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            LlmError::Reply("the first choice of the chat completion has no message".into())
        })?;
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls.clone(),
        Some(_) => {
            return Err(LlmError::Reply(
                "tool_calls in the chat completion is not a list".into(),
            ))
        }
    };
    let extra = message
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "role" | "content" | "tool_calls"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Reply {
        content: text_of(message.get("content")),
        tool_calls,
        usage: payload.get("usage").and_then(Value::as_object).cloned(),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        model: payload
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        extra,
        raw: Value::Object(payload),
    })
}

/// Chunks of `{"choices": [{"delta": {...}, "finish_reason"}], "usage"}`, ended by `[DONE]`.
#[derive(Default)]
pub(super) struct Decoder {
    reply: Assembly,
    done: bool,
}

impl StreamDecoder for Decoder {
    fn event(&mut self, event: &Sse, text: &mut Vec<String>) -> Result<(), LlmError> {
        let data = event.data.as_deref().unwrap_or_default().trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|_| LlmError::not_json(data.as_bytes()))?;
        if let Some(err) = chunk.get("error") {
            return Err(LlmError::Reply(format!(
                "the stream reported an error: {}",
                super::error::describe(err)
            )));
        }
        let r = &mut self.reply;
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            r.model = model.to_string();
        }
        if let Some(u) = chunk.get("usage").and_then(Value::as_object) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64);
            let mut out = usage(
                n("prompt_tokens"),
                n("completion_tokens"),
                n("total_tokens"),
            );
            for (k, v) in u {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
            r.usage = Some(out);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(()); // the usage-only last chunk
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            r.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta").and_then(Value::as_object) else {
            return Ok(());
        };
        r.text(&text_of(delta.get("content")), text);
        for (key, value) in delta {
            // Reasoning text and the like: kept as the provider sends it, joined.
            if let (false, Value::String(piece)) = (
                matches!(key.as_str(), "role" | "content" | "tool_calls" | "refusal"),
                value,
            ) {
                let slot = r
                    .extra
                    .entry(key.clone())
                    .or_insert(Value::String(String::new()));
                if let Value::String(s) = slot {
                    s.push_str(piece);
                }
            }
        }
        for (n, call) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(n as u64);
            let s = |p: &str| call.pointer(p).and_then(Value::as_str).unwrap_or("");
            r.call(index, s("/id"), s("/function/name"));
            r.arguments(index, s("/function/arguments"));
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
    use serde_json::json;

    #[test]
    fn the_request_passes_messages_tools_and_parameters_through() {
        let tools = vec![json!({"type": "function", "function": {"name": "f", "parameters": {}}})];
        let mut params = Map::new();
        params.insert("tool_choice".into(), json!("required"));
        params.insert("parallel_tool_calls".into(), json!(true));
        let call = Call {
            messages: vec![json!({"role": "user", "content": "hi"})],
            tools: Some(tools.clone()),
            params,
            stream: true,
        };
        let req = build_request(Provider::OpenAi, "http://h/v1", "gpt", Some("k"), &call).unwrap();
        assert_eq!(req.url, "http://h/v1/chat/completions");
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        assert_eq!(body["tools"], Value::Array(tools));
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(body["parallel_tool_calls"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
    }

    #[test]
    fn a_reply_keeps_calls_usage_and_provider_fields() {
        let body = json!({"model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
            "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "reasoning_content": "hmm", "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]}}]});
        let reply = parse_reply(Provider::OpenAi, body.to_string().as_bytes()).unwrap();
        assert_eq!(reply.content, "");
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.usage.unwrap()["total_tokens"], 7);
        assert_eq!(reply.extra["reasoning_content"], "hmm");
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        let err = parse_reply(Provider::OpenAi, br#"{"choices": []}"#).unwrap_err();
        assert!(err.to_string().contains("no choices"));
    }

    #[test]
    fn a_stream_assembles_parallel_calls_split_across_chunks() {
        let chunks = [
            json!({"model": "m", "choices": [{"delta": {"role": "assistant", "content": "Let"}}]}),
            json!({"choices": [{"delta": {"content": " me", "tool_calls": [
                {"index": 0, "id": "c0", "type": "function", "function": {"name": "get", "arguments": "{\"ci"}},
                {"index": 1, "id": "c1", "type": "function", "function": {"name": "put", "arguments": ""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "ty\": \"Oslo\"}"}},
                {"index": 1, "function": {"arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}}),
        ];
        let mut decoder = stream_decoder(Provider::OpenAi);
        let mut text = Vec::new();
        for c in &chunks {
            let ev = Sse::default().data(c.to_string());
            decoder.event(&ev, &mut text).unwrap();
        }
        let done = Sse::default().data("[DONE]");
        decoder.event(&done, &mut text).unwrap();
        assert!(decoder.finished());
        let reply = decoder.finish();
        assert_eq!(text, vec!["Let", " me"]);
        assert_eq!(
            reply.tool_calls[0]["function"]["arguments"],
            "{\"city\": \"Oslo\"}"
        );
        assert_eq!(reply.tool_calls[1]["id"], "c1");
        assert_eq!(reply.usage.unwrap()["total_tokens"], 11);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }
}
