"""A provider's reasoning goes back with the turn that made it: Anthropic's thinking and
redacted_thinking blocks (whole replies and streams) reach the next request byte for byte, survive
the history's JSON and a paused run's JSON, and never reach another provider; Gemini's
thoughtSignature goes back on its function call. Every request body is checked against the
official SDKs' request types, every scripted reply read with their reply types first."""

from __future__ import annotations

import json
from typing import Any

from agentmaker import Agent, LLMClient, RunResult, messages_from_json, messages_to_json, tool
from llm_wire_server import WireServer, json_reply, sse_reply
from provider_wire_types import (
    anthropic_event,
    anthropic_reply,
    check_anthropic_request,
    check_gemini_request,
    check_openai_request,
    gemini_reply,
)


@tool
def get_weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: City name.
    """
    return f"{city}: sunny"


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


THINKING = {
    "type": "thinking",
    "thinking": "The user wants Oslo.\nCall get_weather — then answer «briefly».",
    "signature": "EqQBCkYIBxgCKkDm+/9Lq0Zx3w==",
}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFITm2Kx+0g=="}


def message(*blocks: dict[str, Any], stop: str = "end_turn") -> dict[str, Any]:
    return anthropic_reply(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": list(blocks),
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 4},
        }
    )


def thinking_turn(tool_name: str = "get_weather", args: dict[str, Any] | None = None) -> dict[str, Any]:
    call = {"type": "tool_use", "id": "toolu_01", "name": tool_name, "input": args or {"city": "Oslo"}}
    return message(THINKING, REDACTED, {"type": "text", "text": "Checking."}, call, stop="tool_use")


def anthropic(server: WireServer, **kw: Any) -> LLMClient:
    return LLMClient(
        "claude-x",
        provider="anthropic",
        base_url=server.url(),
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        **kw,
    )


def compact(block: dict[str, Any]) -> bytes:
    return json.dumps(block, ensure_ascii=False, separators=(",", ":")).encode()


def assert_thinking_sent_back(raw: bytes, turn: int) -> None:
    """The request ``raw`` carries the thinking blocks, byte for byte and in order, first in
    assistant turn ``turn``, before its text and tool_use."""
    body = check_anthropic_request(raw)
    content = body["messages"][turn]["content"]
    assert [b["type"] for b in content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert content[:2] == [THINKING, REDACTED]
    at_thinking, at_redacted = raw.index(compact(THINKING)), raw.index(compact(REDACTED))
    assert at_thinking < at_redacted < raw.index(b'"type":"tool_use"')


def test_an_agent_sends_the_thinking_blocks_back_with_the_tool_use_turn() -> None:
    replies = [json_reply(thinking_turn()), json_reply(message({"type": "text", "text": "Sunny."}))]
    with WireServer(replies) as server:
        result = Agent("w", anthropic(server), tools=[get_weather]).run("Weather in Oslo?")
    assert result.final_output == "Sunny."
    check_anthropic_request(server.raw[0])
    assert_thinking_sent_back(server.raw[1], 1)
    assistant = result.messages[2]
    assert assistant["provider_reasoning"] == {"provider": "anthropic", "parts": [THINKING, REDACTED]}


def thinking_stream() -> list[dict[str, Any]]:
    start = message(stop="tool_use")
    start["content"], start["stop_reason"] = [], None
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {**THINKING, "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": THINKING["thinking"][:9]},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": THINKING["thinking"][9:]},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": THINKING["signature"]},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": REDACTED},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Checking."}},
        {"type": "content_block_stop", "index": 2},
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Oslo"}'},
        },
        {"type": "content_block_stop", "index": 3},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 30},
        },
        {"type": "message_stop"},
    ]
    return [anthropic_event(e) for e in events]


def test_a_streamed_turn_keeps_its_thinking_blocks_for_the_next_request() -> None:
    replies = [
        sse_reply(thinking_stream(), named=True),
        json_reply(message({"type": "text", "text": "Sunny."})),
    ]
    with WireServer(replies) as server:
        result = Agent("w", anthropic(server, stream=True), tools=[get_weather]).run("Weather?")
    assert result.final_output == "Sunny."
    assert check_anthropic_request(server.raw[0])["stream"] is True
    assert_thinking_sent_back(server.raw[1], 1)


def test_the_history_json_keeps_them_and_other_providers_never_get_them() -> None:
    replies = [json_reply(thinking_turn()), json_reply(message({"type": "text", "text": "Sunny."}))]
    with WireServer(replies) as server:
        first = Agent("w", anthropic(server), tools=[get_weather]).run("Weather in Oslo?")
    history = messages_from_json(messages_to_json(first.messages))
    assert history == first.messages
    with WireServer([json_reply(message({"type": "text", "text": "Still sunny."}))]) as server:
        again = Agent("w", anthropic(server), tools=[get_weather]).run("And now?", message_history=history)
    assert again.final_output == "Still sunny."
    assert_thinking_sent_back(server.raw[0], 1)

    openai_reply = {
        "choices": [{"message": {"role": "assistant", "content": "Fine."}, "finish_reason": "stop"}]
    }
    with WireServer([json_reply(openai_reply)]) as server:
        gpt = LLMClient("gpt-x", base_url=server.url())
        Agent("w", gpt, tools=[get_weather]).run("And now?", message_history=history)
    gemini_text = gemini_reply(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Fine."}]}, "finishReason": "STOP"}]}
    )
    with WireServer([json_reply(gemini_text)]) as gemini_server:
        gemini = LLMClient("gemini-x", provider="gemini", base_url=gemini_server.url("/v1beta"))
        Agent("w", gemini, tools=[get_weather]).run("And now?", message_history=history)
    for raw, check in ((server.raw[0], check_openai_request), (gemini_server.raw[0], check_gemini_request)):
        check(raw)
        assert THINKING["signature"].encode() not in raw and REDACTED["data"].encode() not in raw
        assert b"provider_reasoning" not in raw


def test_a_paused_run_keeps_them_through_its_json_and_resume_sends_them() -> None:
    replies = [
        json_reply(thinking_turn("delete_file", {"path": "a.txt"})),
        json_reply(message({"type": "text", "text": "Deleted."})),
    ]
    with WireServer(replies) as server:
        agent = Agent("w", anthropic(server), tools=[delete_file], confirm="pause")
        paused = agent.run("Delete a.txt")
        assert paused.status == "paused" and len(server.raw) == 1
        stored = RunResult.from_json(paused.to_json())
        result = agent.resume(stored, {paused.pending[0].id: True})
    assert result.final_output == "Deleted."
    assert_thinking_sent_back(server.raw[1], 1)


def test_gemini_gets_its_thought_signature_back_on_the_function_call() -> None:
    signature = "CiQBcsjafDkmQm9yX7N2aWdu"
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": signature}
    replies = [
        json_reply(
            gemini_reply(
                {"candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}]}
            )
        ),
        json_reply(
            gemini_reply(
                {
                    "candidates": [
                        {"content": {"role": "model", "parts": [{"text": "Sunny."}]}, "finishReason": "STOP"}
                    ]
                }
            )
        ),
    ]
    with WireServer(replies) as server:
        gemini = LLMClient("gemini-x", provider="gemini", base_url=server.url("/v1beta"))
        result = Agent("w", gemini, tools=[get_weather]).run("Weather?")
    assert result.final_output == "Sunny."
    check_gemini_request(server.raw[0])
    second = check_gemini_request(server.raw[1])
    model_turn = second["contents"][1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"] == [
        {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": signature}
    ]


def test_a_streamed_gemini_call_keeps_its_thought_signature() -> None:
    signature = "CiQBcsjafDkmQm9yX7N2aWdu"
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}, "thoughtSignature": signature}
    chunks = [
        gemini_reply({"candidates": [{"content": {"role": "model", "parts": [{"text": "Let me check."}]}}]}),
        gemini_reply(
            {"candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}]}
        ),
    ]
    done = gemini_reply(
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "Sunny."}]}, "finishReason": "STOP"}
            ]
        }
    )
    with WireServer([sse_reply(chunks), json_reply(done)]) as server:
        gemini = LLMClient("gemini-x", provider="gemini", base_url=server.url("/v1beta"), stream=True)
        result = Agent("w", gemini, tools=[get_weather]).run("Weather?")
    assert result.final_output == "Sunny."
    model_turn = check_gemini_request(server.raw[1])["contents"][1]
    assert model_turn["parts"] == [{"text": "Let me check."}, call]


def test_interleaved_thinking_goes_back_in_the_order_it_came() -> None:
    later = {"type": "thinking", "thinking": "Now Rome.", "signature": "EqQBCkYIBxgCKkDz=="}
    content = [
        THINKING,
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Oslo"}},
        later,
        REDACTED,
        {"type": "tool_use", "id": "toolu_02", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    replies = [
        json_reply(message(*content, stop="tool_use")),
        json_reply(message({"type": "text", "text": "Both sunny."})),
    ]
    with WireServer(replies) as server:
        result = Agent("w", anthropic(server), tools=[get_weather]).run("Oslo and Rome?")
    assert result.final_output == "Both sunny."
    assert check_anthropic_request(server.raw[1])["messages"][1]["content"] == content
    positions = [server.raw[1].index(compact(block)) for block in (THINKING, later, REDACTED)]
    assert positions == sorted(positions)
    kept = result.messages[2]["provider_reasoning"]
    assert kept == {
        "provider": "anthropic",
        "parts": [THINKING, later, REDACTED],
        "layout": ["reasoning", "text", "call", "reasoning", "reasoning", "call"],
    }
