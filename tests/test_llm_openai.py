"""LLMClient speaking OpenAI chat completions to a loopback server: the request's shape,
streamed text and tool calls split across events, and an agent run end to end."""

from __future__ import annotations

import asyncio
import json

import pytest
from agentmaker import Agent, LLMClient, tool
from llm_wire_server import WireServer, json_reply, sse_reply


@tool
def get_weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: City name.
    """
    return f"{city}: sunny"


def call(id_: str, name: str, args: dict) -> dict:
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def completion(content=None, calls=None, usage=None) -> dict:
    message = {"role": "assistant", "content": content, **({"tool_calls": calls} if calls else {})}
    body = {
        "model": "gpt-x",
        "choices": [{"message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }
    return {**body, "usage": usage} if usage else body


def split_call_stream() -> list:
    """Two parallel calls whose ids and names come first and arguments in pieces."""
    first = '{"city": "Oslo"}'
    return [
        {"model": "gpt-x", "choices": [{"delta": {"role": "assistant", "content": "Checking"}}]},
        {"choices": [{"delta": {"content": " both."}}]},
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c0",
                                "function": {"name": "get_weather", "arguments": first[:5]},
                            }
                        ]
                    }
                }
            ]
        },
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": first[5:]}}]}}]},
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 1, "id": "c1", "function": {"name": "get_weather", "arguments": '{"ci'}}
                        ]
                    }
                }
            ]
        },
        {"choices": [{"delta": {"tool_calls": [{"index": 1, "function": {"arguments": 'ty": "Rome"}'}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}},
        "[DONE]",
    ]


def test_the_request_carries_model_messages_tools_choice_and_key():
    with WireServer([json_reply(completion("hi"))]) as server:
        llm = LLMClient(
            "gpt-x", base_url=server.url(), api_key="sk-1", temperature=0, headers={"X-Team": "t"}
        )
        tools = [
            {
                "type": "function",
                "function": {"name": "f", "description": "F.", "parameters": {"type": "object"}},
            }
        ]
        llm.chat(
            [{"role": "user", "content": "hi"}],
            tools=tools,
            tool_choice="required",
            parallel_tool_calls=False,
        )
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-1"
    assert headers["Content-Type"] == "application/json" and headers["X-Team"] == "t"
    assert body == {
        "model": "gpt-x",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0,
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "tools": tools,
    }


def test_a_stream_yields_text_and_assembles_calls_split_across_events():
    with WireServer([sse_reply(split_call_stream())]) as server:
        llm = LLMClient("gpt-x", base_url=server.url(), api_key="k")
        stream = llm.stream([{"role": "user", "content": "Weather?"}])
        deltas = list(stream)
    assert deltas == ["Checking", " both."]
    resp = stream.response
    assert resp.content == "Checking both."
    assert [c["function"]["arguments"] for c in resp.tool_calls] == ['{"city": "Oslo"}', '{"city": "Rome"}']
    assert [c["id"] for c in resp.tool_calls] == ["c0", "c1"]
    assert resp.usage == {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}
    assert resp.finish_reason == "tool_calls"
    body = server.requests[0][2]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert server.requests[0][1]["Accept"] == "text/event-stream"


def test_astream_reads_the_same_stream_on_the_loop():
    async def main(llm):
        async with llm.astream([{"role": "user", "content": "x"}]) as stream:
            deltas = [d async for d in stream]
        return deltas, stream.response

    with WireServer([sse_reply(split_call_stream())]) as server:
        deltas, resp = asyncio.run(main(LLMClient("gpt-x", base_url=server.url(), api_key="k")))
    assert deltas == ["Checking", " both."]
    assert len(resp.tool_calls) == 2


def test_the_response_is_not_there_before_the_stream_ends():
    with WireServer([sse_reply(split_call_stream())]) as server:
        stream = LLMClient("gpt-x", base_url=server.url()).stream([])
        assert next(stream) == "Checking"
        with pytest.raises(RuntimeError, match="has not finished"):
            _ = stream.response
        stream.close()


def test_a_server_that_ignores_stream_still_streams_one_delta():
    with WireServer([json_reply(completion("whole"))]) as server:
        stream = LLMClient("m", base_url=server.url()).stream([])
        assert list(stream) == ["whole"] and stream.response.content == "whole"


def test_an_agent_runs_tools_over_chat_and_over_a_stream():
    replies = [
        json_reply(
            completion(
                None,
                [call("a", "get_weather", {"city": "Oslo"})],
                {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
            )
        ),
        json_reply(
            completion("Sunny.", usage={"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8})
        ),
        sse_reply(split_call_stream()),
        sse_reply([{"choices": [{"delta": {"content": "Both sunny."}}]}, "[DONE]"]),
    ]
    with WireServer(replies) as server:
        result = Agent("w", LLMClient("gpt-x", base_url=server.url()), tools=[get_weather]).run("Oslo?")
        streamed = LLMClient("gpt-x", base_url=server.url(), stream=True)
        both = asyncio.run(Agent("w", streamed, tools=[get_weather]).arun("Oslo and Rome?"))
    assert result.final_output == "Sunny." and result.usage.total_tokens == 18
    assert both.final_output == "Both sunny."
    assert [r.output for r in both.tool_calls] == ["Oslo: sunny", "Rome: sunny"]
    second = server.requests[1][2]["messages"]
    assert second[-2]["tool_calls"] == [call("a", "get_weather", {"city": "Oslo"})]
    assert second[-1] == {"role": "tool", "tool_call_id": "a", "content": "Oslo: sunny"}
    fourth = server.requests[3][2]["messages"]
    assert [m["tool_call_id"] for m in fourth if m["role"] == "tool"] == ["c0", "c1"]
    assert server.requests[0][2]["tools"][0]["function"]["name"] == "get_weather"


def test_an_agent_streams_its_events_from_the_client_with_tool_calls_intact():
    from agentmaker.events import TextDelta, ToolEnd

    replies = [
        sse_reply(split_call_stream()),
        sse_reply([{"choices": [{"delta": {"content": "Both sunny."}}]}, "[DONE]"]),
    ]

    async def main(agent):
        return [event async for event in agent.astream("Oslo and Rome?")]

    with WireServer(replies) as server:
        agent = Agent("w", LLMClient("gpt-x", base_url=server.url()), tools=[get_weather])
        events = asyncio.run(main(agent))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Checking", " both.", "Both sunny."]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.status for e in ends] == ["success", "success"]
    assert events[-1].result.final_output == "Both sunny."
