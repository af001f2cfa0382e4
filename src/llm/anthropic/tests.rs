//! The Anthropic codec against the shapes of its wire.

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

/// The reply (and the text deltas) a whole stream of `events` gives.
fn decode(events: &[Value]) -> (Reply, Vec<String>) {
    let mut decoder = stream_decoder(Provider::Anthropic);
    let mut text = Vec::new();
    for e in events {
        let ev = Sse::default()
            .event(e["type"].as_str().unwrap())
            .data(e.to_string());
        decoder.event(&ev, &mut text).unwrap();
    }
    assert!(decoder.finished());
    (decoder.finish(), text)
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
    let (reply, mut text) = decode(&events);
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

#[test]
fn text_parts_stay_separate_blocks() {
    let call = Call {
        messages: vec![
            json!({"role": "system", "content": [{"type": "text", "text": "Rule one."},
                {"type": "text", "text": "Rule two.", "cache_control": {"type": "ephemeral"}}]}),
            json!({"role": "system", "content": "Rule three."}),
            json!({"role": "user", "content": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]}),
        ],
        ..Call::default()
    };
    let body = body_of(&call);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Rule one."},
               {"type": "text", "text": "Rule two.", "cache_control": {"type": "ephemeral"}},
               {"type": "text", "text": "Rule three."}])
    );
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "text", "text": "A"}, {"type": "text", "text": "B"}])
    );
}

#[test]
fn image_parts_become_image_blocks_and_unfit_parts_are_refused() {
    let user = |parts: Value| Call {
        messages: vec![json!({"role": "user", "content": parts})],
        ..Call::default()
    };
    let body = body_of(&user(json!([
        {"type": "text", "text": "Compare."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "https://img.test/cat.jpg"}},
    ])));
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "text", "text": "Compare."},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
               {"type": "image", "source": {"type": "url", "url": "https://img.test/cat.jpg"}}])
    );
    let refused = |parts: Value| {
        build_request(Provider::Anthropic, "http://h/v1", "c", None, &user(parts))
            .unwrap_err()
            .to_string()
    };
    let err = refused(
        json!([{"type": "image_url", "image_url": {"url": "data:application/pdf;base64,JVBE"}}]),
    );
    assert!(
        err.contains("message 0: Anthropic cannot take an image of type \"application/pdf\""),
        "{err}"
    );
    let err =
        refused(json!([{"type": "image_url", "image_url": {"url": "https://img.test/a.heic"}}]));
    assert!(err.contains("\"image/heic\""), "{err}");
    let err =
        refused(json!([{"type": "input_audio", "input_audio": {"data": "x", "format": "wav"}}]));
    assert!(
        err.contains("cannot take a \"input_audio\" content part"),
        "{err}"
    );
    let err = refused(json!([{"type": "image_url", "image_url": {"url": "ftp://img.test/a.png"}}]));
    assert!(err.contains("data: URL or an http(s) URL"), "{err}");
}

fn thinking_reply() -> Value {
    json!({"model": "claude", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [
            {"type": "thinking", "thinking": "Oslo first.", "signature": "EqQBCkYIBxgCKkA="},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "t1", "name": "w", "input": {"city": "Oslo"}}]})
}

#[test]
fn thinking_blocks_go_back_before_the_tool_use_of_their_turn() {
    let reply = parse_reply(Provider::Anthropic, thinking_reply().to_string().as_bytes()).unwrap();
    let kept = reply.extra["provider_reasoning"].clone();
    assert_eq!(kept["provider"], "anthropic");
    assert_eq!(
        kept["parts"],
        json!(thinking_reply()["content"].as_array().unwrap()[..2])
    );
    let mut assistant =
        json!({"role": "assistant", "content": reply.content, "tool_calls": reply.tool_calls});
    assistant["provider_reasoning"] = kept;
    let call = Call {
        messages: vec![
            json!({"role": "user", "content": "Weather?"}),
            assistant,
            json!({"role": "tool", "tool_call_id": "t1", "content": "sunny"}),
        ],
        ..Call::default()
    };
    let body = body_of(&call);
    let mut expected = thinking_reply()["content"].clone();
    expected[3]["input"] = json!({"city": "Oslo"});
    assert_eq!(body["messages"][1]["content"], expected);
    let openai = build_request(Provider::OpenAi, "http://h", "m", None, &call).unwrap();
    let openai: Value = serde_json::from_slice(&openai.body).unwrap();
    assert!(openai["messages"][1].get("provider_reasoning").is_none());
    let gemini = build_request(Provider::Gemini, "http://h", "m", None, &call).unwrap();
    assert!(!String::from_utf8(gemini.body)
        .unwrap()
        .contains("EqQBCkYIBxgCKkA="));
}

#[test]
fn a_stream_keeps_thinking_and_redacted_blocks_in_order() {
    let events = [
        json!({"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 9, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Oslo "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "first."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCkYIBxgCKkA="}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "w", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ];
    let (reply, text) = decode(&events);
    assert_eq!(
        reply.extra["provider_reasoning"],
        json!({"provider": "anthropic", "parts": [
            {"type": "thinking", "thinking": "Oslo first.", "signature": "EqQBCkYIBxgCKkA="},
            {"type": "redacted_thinking", "data": "EmwKAhgB"}]})
    );
    assert!(text.is_empty());
}

#[test]
fn reasoning_parts_of_another_shape_are_refused() {
    let call = Call {
        messages: vec![
            json!({"role": "user", "content": "x"}),
            json!({"role": "assistant", "content": "y",
                   "provider_reasoning": {"provider": "anthropic", "parts": [{"type": "text", "text": "z"}]}}),
        ],
        ..Call::default()
    };
    let err = build_request(Provider::Anthropic, "http://h", "c", None, &call).unwrap_err();
    assert!(
        err.to_string()
            .contains("thinking and redacted_thinking blocks"),
        "{err}"
    );
}

fn interleaved_content() -> Value {
    json!([
        {"type": "thinking", "thinking": "Oslo first.", "signature": "c2lnMQ=="},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "t1", "name": "w", "input": {"city": "Oslo"}},
        {"type": "thinking", "thinking": "Now Rome.", "signature": "c2lnMg=="},
        {"type": "tool_use", "id": "t2", "name": "w", "input": {"city": "Rome"}}
    ])
}

/// The assistant turn the next request sends for `reply`.
fn sent_back(reply: Reply) -> Value {
    let mut assistant =
        json!({"role": "assistant", "content": reply.content, "tool_calls": reply.tool_calls});
    assistant["provider_reasoning"] = reply.extra["provider_reasoning"].clone();
    let call = Call {
        messages: vec![json!({"role": "user", "content": "Weather?"}), assistant],
        ..Call::default()
    };
    body_of(&call)["messages"][1]["content"].clone()
}

#[test]
fn interleaved_thinking_goes_back_where_it_was() {
    let body =
        json!({"model": "claude", "stop_reason": "tool_use", "content": interleaved_content()});
    let reply = parse_reply(Provider::Anthropic, body.to_string().as_bytes()).unwrap();
    assert_eq!(
        reply.extra["provider_reasoning"]["layout"],
        json!(["reasoning", "text", "call", "reasoning", "call"])
    );
    assert_eq!(sent_back(reply), interleaved_content());
}

#[test]
fn interleaved_thinking_of_a_stream_goes_back_where_it_was() {
    let content = interleaved_content();
    let mut events = vec![json!({"type": "message_start", "message": {"model": "claude"}})];
    for (index, block) in content.as_array().unwrap().iter().enumerate() {
        let (start, delta) = match block["type"].as_str().unwrap() {
            "thinking" => (
                json!({"type": "thinking", "thinking": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ],
            ),
            "text" => (
                json!({"type": "text", "text": ""}),
                vec![json!({"type": "text_delta", "text": block["text"]})],
            ),
            _ => (
                json!({"type": "tool_use", "id": block["id"], "name": "w", "input": {}}),
                vec![
                    json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                ],
            ),
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for d in delta {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": d}));
        }
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}));
    events.push(json!({"type": "message_stop"}));
    let (reply, _) = decode(&events);
    assert_eq!(sent_back(reply), content);
}
