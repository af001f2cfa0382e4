"""Argument repair with the model on the wire: a real ``LLMClient`` against a provider-shaped
server on 127.0.0.1, each reply first read by the provider's own SDK type. The repaired call
runs and the next request tells the model what was repaired; a reply the provider cut off at
its token limit (OpenAI ``finish_reason: "length"``, Anthropic ``stop_reason: "max_tokens"``,
Gemini ``MAX_TOKENS``) is never completed, and the model is told it was cut off. Local model
servers (llama.cpp, vLLM, Ollama) speak the OpenAI form, which is where malformed arguments
come from most."""

from __future__ import annotations

from typing import Any

import pytest
from agentmaker import Agent, LLMClient, tool
from llm_wire_server import WireServer, json_reply, sse_reply
from provider_wire_types import (
    anthropic_event,
    anthropic_reply,
    check_anthropic_request,
    check_gemini_request,
    check_openai_request,
    gemini_reply,
    openai_chunk,
    openai_reply,
)

ran: list[tuple[str, int]] = []
CUT_OFF = (
    "Error: the arguments for tool 'forecast' were cut off: your reply reached its token limit "
    "before they were complete, so the call was not run. Send the call again, shorter if it must be."
)


@tool
def forecast(city: str, days: int = 1) -> str:
    """The weather ahead.

    Args:
        city: City name.
        days: How many days.
    """
    ran.append((city, days))
    return f"{city}: {days} days of sun"


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return openai_reply(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "local-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    )


def openai_call(arguments: str, finish: str = "tool_calls") -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": "forecast", "arguments": arguments}}
    return completion({"role": "assistant", "content": None, "tool_calls": [call]}, finish)


def openai_text(text: str) -> dict[str, Any]:
    return completion({"role": "assistant", "content": text}, "stop")


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return openai_chunk(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "local-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def streamed_call(pieces: list[str], finish: str) -> list[Any]:
    """A tool call whose arguments arrive in ``pieces``, then the finish reason and ``[DONE]``."""
    head = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "forecast", "arguments": ""}}
    chunks: list[Any] = [chunk({"role": "assistant", "tool_calls": [head]})]
    chunks += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    return [*chunks, chunk({}, finish), "[DONE]"]


def tool_message(raw: bytes) -> str:
    """What the model read for its call in the request ``raw``."""
    messages = check_openai_request(raw)["messages"]
    assert messages[-1]["role"] == "tool" and messages[-1]["tool_call_id"] == "call_1"
    content = messages[-1]["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def local(server: WireServer, **kw: Any) -> LLMClient:
    return LLMClient("local-model", base_url=server.url(), **kw)


def test_a_local_models_malformed_arguments_are_repaired_and_the_model_is_told() -> None:
    replies = [
        json_reply(openai_call("```json\n{'city': 'Oslo', 'days': '3',}\n```")),
        json_reply(openai_text("Sunny.")),
    ]
    with WireServer(replies) as server:
        result = Agent("w", local(server), tools=[forecast]).run("Weather in Oslo?")
    rec = result.tool_calls[0]
    assert (result.final_output, rec.status, ran) == ("Sunny.", "success", [("Oslo", 3)])
    assert rec.arguments == {"city": "Oslo", "days": 3}
    assert rec.repairs == [
        "code fence removed",
        "single-quoted strings read as JSON strings",
        "trailing comma removed",
        "'days': \"3\" → 3",
    ]
    told = tool_message(server.raw[1])
    assert told.startswith("Oslo: 3 days of sun\n\n(Note: the arguments of this call were repaired")
    assert all(r in told for r in rec.repairs)


@pytest.mark.parametrize("finish", ["length", "tool_calls"])
def test_a_streamed_call_cut_at_the_token_limit_is_refused_and_only_then(finish: str) -> None:
    pieces = ['{"city": ', '"Oslo", "da', 'ys": 3']  # the closing brace never came
    replies = [sse_reply(streamed_call(pieces, finish)), json_reply(openai_text("Sorry."))]
    with WireServer(replies) as server:
        result = Agent("w", local(server, stream=True), tools=[forecast]).run("Weather in Oslo?")
    rec = result.tool_calls[0]
    if finish == "length":
        # The missing part might have held more arguments: nothing runs, the model is told why.
        assert (rec.status, rec.output, ran) == ("invalid_args", CUT_OFF, [])
        assert tool_message(server.raw[1]) == CUT_OFF
    else:
        # The model ended its reply itself: only the brace is missing, and it is added.
        assert (rec.status, ran, rec.repairs) == ("success", [("Oslo", 3)], ["missing '}' added at the end"])


def test_a_string_cut_inside_is_never_completed_even_when_the_model_stopped() -> None:
    replies = [sse_reply(streamed_call(['{"city": "Os'], "tool_calls")), json_reply(openai_text("Sorry."))]
    with WireServer(replies) as server:
        result = Agent("w", local(server, stream=True), tools=[forecast]).run("Weather?")
    rec = result.tool_calls[0]
    assert (rec.status, ran) == ("invalid_args", [])
    assert rec.output == "Error: arguments for tool 'forecast' are not valid JSON"


def test_anthropic_max_tokens_inside_a_tool_use_block_is_refused_as_cut_off() -> None:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 20, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_01", "name": "forecast", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Oslo", '},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '"days": 3'},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
            "usage": {"output_tokens": 64},
        },
        {"type": "message_stop"},
    ]
    done = anthropic_reply(
        {
            "id": "msg_02",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": "Sorry."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 30, "output_tokens": 2},
        }
    )
    replies = [sse_reply([anthropic_event(e) for e in events], named=True), json_reply(done)]
    with WireServer(replies) as server:
        claude = LLMClient(
            "claude-x", provider="anthropic", base_url=server.url(), max_tokens=64, stream=True
        )
        result = Agent("w", claude, tools=[forecast]).run("Weather in Oslo?")
    rec = result.tool_calls[0]
    assert (rec.status, rec.output, ran) == ("invalid_args", CUT_OFF, [])
    turn = check_anthropic_request(server.raw[1])["messages"]
    result_block = turn[-1]["content"][0]
    assert (result_block["type"], result_block["tool_use_id"]) == ("tool_result", "toolu_01")
    assert CUT_OFF in str(result_block["content"])


def test_gemini_arguments_arrive_parsed_and_are_still_coerced_to_the_schema() -> None:
    call = {"functionCall": {"name": "forecast", "args": {"City": "Oslo", "days": "3"}}}
    first = gemini_reply(
        {"candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}]}
    )
    done = gemini_reply(
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "Sunny."}]}, "finishReason": "STOP"}
            ]
        }
    )
    with WireServer([json_reply(first), json_reply(done)]) as server:
        gemini = LLMClient("gemini-x", provider="gemini", base_url=server.url("/v1beta"))
        result = Agent("w", gemini, tools=[forecast]).run("Weather in Oslo?")
    rec = result.tool_calls[0]
    assert (rec.status, ran) == ("success", [("Oslo", 3)])
    assert rec.repairs == ["'City' → 'city'", "'days': \"3\" → 3"]
    answer = check_gemini_request(server.raw[1])["contents"][-1]["parts"][0]["functionResponse"]
    assert answer["name"] == "forecast" and "(Note: the arguments of this call were repaired" in str(
        answer["response"]
    )
