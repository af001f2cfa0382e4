"""LLMClient speaking Anthropic Messages to a loopback server: headers, system apart, tools as
input_schema, tool_use/tool_result blocks, a stream with partial JSON, and an agent run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentmaker import Agent, LLMClient, LLMResponseError, tool
from llm_wire_server import WireServer, json_reply, sse_reply


@tool
def get_weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: City name.
    """
    return f"{city}: sunny"


def message(*blocks: dict, stop: str = "end_turn") -> dict:
    usage = {"input_tokens": 20, "output_tokens": 4}
    return {
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": list(blocks),
        "stop_reason": stop,
        "usage": usage,
    }


def tool_use(id_: str, city: str) -> dict:
    return {"type": "tool_use", "id": id_, "name": "get_weather", "input": {"city": city}}


def split_tool_use_stream() -> list:
    """Text, then two tool_use blocks whose input arrives as partial JSON in pieces."""
    return [
        {
            "type": "message_start",
            "message": {"model": "claude-x", "usage": {"input_tokens": 25, "output_tokens": 1}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " check."}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "tu_1", "name": "get_weather", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"ci'},
        },
        {"type": "ping"},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": 'ty": "Oslo"}'},
        },
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "tu_2", "name": "get_weather", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Rome"}'},
        },
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}},
        {"type": "message_stop"},
    ]


def client(server: WireServer, **kw) -> LLMClient:
    return LLMClient("claude-x", provider="anthropic", base_url=server.url(), api_key="ak-1", **kw)


def test_the_request_has_anthropic_headers_system_apart_and_tool_blocks():
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "Oslo: sunny"},
        {"role": "tool", "tool_call_id": "b", "content": "Rome: rain"},
    ]
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tools = [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "Weather.", "parameters": schema},
        }
    ]
    # The SDK's request type has no temperature: the codec sends a keyword it does not know as is.
    with WireServer(
        [json_reply(message({"type": "text", "text": "Sunny and rain."}))], passed=("temperature",)
    ) as server:
        llm = client(server, temperature=0)
        resp = llm.chat(history, tools=tools, tool_choice="required")
    assert resp.content == "Sunny and rain."
    assert resp.usage == {
        "prompt_tokens": 20,
        "completion_tokens": 4,
        "total_tokens": 24,
        "input_tokens": 20,
        "output_tokens": 4,
    }
    path, headers, body = server.requests[0]
    assert path == "/v1/messages"
    assert headers["x-api-key"] == "ak-1" and headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in headers
    assert body["system"] == "Be brief." and body["max_tokens"] == 4096 and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "a", "name": "get_weather", "input": {"city": "Oslo"}},
        {"type": "tool_use", "id": "b", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": "Oslo: sunny"},
        {"type": "tool_result", "tool_use_id": "b", "content": "Rome: rain"},
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["tools"] == [{"name": "get_weather", "description": "Weather.", "input_schema": schema}]


def test_a_reply_with_tool_use_becomes_openai_shaped_calls():
    reply = message({"type": "text", "text": "On it."}, tool_use("tu_9", "Oslo"), stop="tool_use")
    with WireServer([json_reply(reply)]) as server:
        resp = client(server).chat([{"role": "user", "content": "x"}])
    assert resp.content == "On it." and resp.finish_reason == "tool_calls"
    assert resp.tool_calls == [
        {
            "id": "tu_9",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        }
    ]


def test_a_stream_joins_partial_json_into_parallel_calls():
    with WireServer([sse_reply(split_tool_use_stream(), named=True)]) as server:
        stream = client(server).stream([{"role": "user", "content": "x"}])
        deltas = list(stream)
    assert deltas == ["Let me", " check."]
    resp = stream.response
    assert [(c["id"], c["function"]["arguments"]) for c in resp.tool_calls] == [
        ("tu_1", '{"city": "Oslo"}'),
        ("tu_2", '{"city": "Rome"}'),
    ]
    assert resp.usage["prompt_tokens"] == 25 and resp.usage["completion_tokens"] == 40
    assert server.requests[0][2]["stream"] is True


def test_an_error_event_mid_stream_raises_with_its_message():
    events = [
        {"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 1}}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    with WireServer([sse_reply(events, named=True)]) as server:
        stream = client(server).stream([])
        with pytest.raises(LLMResponseError, match="overloaded_error: Overloaded"):
            list(stream)


def test_an_agent_runs_parallel_tool_calls_through_anthropic():
    replies = [
        json_reply(message(tool_use("tu_1", "Oslo"), tool_use("tu_2", "Rome"), stop="tool_use")),
        json_reply(message({"type": "text", "text": "Both sunny."})),
        sse_reply(split_tool_use_stream(), named=True),
        json_reply(message({"type": "text", "text": "Streamed and done."})),
    ]
    with WireServer(replies) as server:
        result = Agent("w", client(server), tools=[get_weather]).run("Oslo and Rome?")
        streamed = asyncio.run(Agent("w", client(server, stream=True), tools=[get_weather]).arun("Again?"))
    assert result.final_output == "Both sunny."
    assert streamed.final_output == "Streamed and done."
    first, second = server.requests[0][2], server.requests[1][2]
    assert first["tools"][0]["name"] == "get_weather"
    assert first["tools"][0]["input_schema"]["properties"]["city"]["type"] == "string"
    assert "function" not in first["tools"][0]
    assert second["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "tu_1", "content": "Oslo: sunny"},
        {"type": "tool_result", "tool_use_id": "tu_2", "content": "Rome: sunny"},
    ]
    assert result.usage.total_tokens == 48


def test_headers_override_the_anthropic_version_and_add_beta_flags():
    reply = json_reply(message({"type": "text", "text": "ok"}))
    with WireServer([reply, json_reply(message({"type": "text", "text": "ok"}))]) as server:
        pinned = client(
            server,
            headers={"Anthropic-Version": "2024-10-22", "anthropic-beta": "interleaved-thinking-2025-05-14"},
        )
        pinned.chat([{"role": "user", "content": "x"}])
        client(server).chat([{"role": "user", "content": "x"}])
    (_, overridden, _), (_, default, _) = server.requests
    assert overridden.get_all("anthropic-version") == ["2024-10-22"]
    assert overridden["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert default.get_all("anthropic-version") == ["2023-06-01"]


def test_the_docs_show_the_anthropic_version_override():
    # docs/llm.md once called the header fixed; it must show the override this file tests.
    docs = (Path(__file__).parent.parent / "docs" / "llm.md").read_text(encoding="utf-8")
    assert "`anthropic-version: 2023-06-01` unless `headers=` gives another" in docs
    assert 'headers={"anthropic-version": ' in docs
