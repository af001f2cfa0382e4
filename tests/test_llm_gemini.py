"""LLMClient speaking Gemini generateContent to a loopback server: the URL per model and mode,
the key header, systemInstruction, functionDeclarations in Gemini's schema dialect,
functionCall/functionResponse parts, a stream, and an agent run."""

from __future__ import annotations

import asyncio

from agentmaker import Agent, LLMClient, tool
from llm_wire_server import WireServer, json_reply, sse_reply


@tool
def get_weather(city: str, days: int | None = None) -> str:
    """Weather for a city.

    Args:
        city: City name.
        days: How many days ahead.
    """
    return f"{city}: sunny"


def candidate(*parts: dict, finish: str | None = "STOP", usage: bool = True) -> dict:
    body: dict = {
        "candidates": [{"content": {"role": "model", "parts": list(parts)}}],
        "modelVersion": "gemini-x",
    }
    if finish:
        body["candidates"][0]["finishReason"] = finish
    if usage:
        body["usageMetadata"] = {"promptTokenCount": 11, "candidatesTokenCount": 3, "totalTokenCount": 14}
    return body


def function_call(city: str) -> dict:
    return {"functionCall": {"name": "get_weather", "args": {"city": city}}}


def client(server: WireServer, **kw) -> LLMClient:
    return LLMClient("gemini-x", provider="gemini", base_url=server.url("/v1beta"), api_key="gk-1", **kw)


def test_the_request_has_the_model_url_key_header_and_gemini_shapes():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": ["integer", "null"]}},
        "required": ["city"],
        "additionalProperties": False,
    }
    tools = [
        {
            "type": "function",
            "function": {"name": "get_weather", "description": "Weather.", "parameters": schema},
        }
    ]
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Oslo: sunny"},
    ]
    with WireServer([json_reply(candidate({"text": "Sunny."}))]) as server:
        resp = client(server).chat(history, tools=tools, temperature=0.2, max_tokens=50, tool_choice="auto")
    assert resp.content == "Sunny." and resp.usage["total_tokens"] == 14 and resp.model == "gemini-x"
    path, headers, body = server.requests[0]
    assert path == "/v1beta/models/gemini-x:generateContent"
    assert headers["x-goog-api-key"] == "gk-1" and "key=" not in path
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Oslo?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"content": "Oslo: sunny"}}}],
        },
    ]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get_weather"
    assert declaration["parameters"]["properties"]["days"] == {"type": "integer", "nullable": True}
    assert "additionalProperties" not in declaration["parameters"]
    assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 50}
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


def test_function_calls_get_unique_ids_and_openai_shape():
    reply = candidate({"text": "Both."}, function_call("Oslo"), function_call("Rome"))
    with WireServer([json_reply(reply)]) as server:
        resp = client(server).chat([{"role": "user", "content": "x"}])
    assert resp.finish_reason == "tool_calls"
    assert [c["function"] for c in resp.tool_calls] == [
        {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        {"name": "get_weather", "arguments": '{"city":"Rome"}'},
    ]
    ids = [c["id"] for c in resp.tool_calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)


def test_a_stream_gathers_text_and_calls_from_every_chunk():
    chunks = [
        candidate({"text": "Check"}, finish=None, usage=False),
        candidate({"text": "ing."}, function_call("Oslo"), finish=None, usage=False),
        candidate(function_call("Rome")),
    ]
    with WireServer([sse_reply(chunks)]) as server:
        stream = client(server).stream([{"role": "user", "content": "x"}])
        deltas = list(stream)
    assert deltas == ["Check", "ing."]
    resp = stream.response
    assert [c["function"]["arguments"] for c in resp.tool_calls] == ['{"city":"Oslo"}', '{"city":"Rome"}']
    assert resp.usage["prompt_tokens"] == 11
    assert server.requests[0][0] == "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"


def test_an_agent_runs_tool_calls_through_gemini():
    replies = [
        json_reply(candidate(function_call("Oslo"), function_call("Rome"))),
        json_reply(candidate({"text": "Sunny in both."})),
        sse_reply([candidate({"text": "Str"}, finish=None, usage=False), candidate(function_call("Bergen"))]),
        sse_reply([candidate({"text": "Bergen too."})]),
    ]
    with WireServer(replies) as server:
        result = Agent("w", client(server), tools=[get_weather]).run("Oslo and Rome?")
        streamed = asyncio.run(Agent("w", client(server, stream=True), tools=[get_weather]).arun("Bergen?"))
    assert result.final_output == "Sunny in both."
    assert streamed.final_output == "Bergen too."
    second = server.requests[1][2]
    assert second["contents"][-1] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"content": "Oslo: sunny"}}},
            {"functionResponse": {"name": "get_weather", "response": {"content": "Rome: sunny"}}},
        ],
    }
    assert second["contents"][-2]["role"] == "model"
    declaration = server.requests[0][2]["tools"][0]["functionDeclarations"][0]
    assert declaration["parameters"]["required"] == ["city"]
    assert server.requests[3][2]["contents"][-1]["parts"][0]["functionResponse"]["response"] == {
        "content": "Bergen: sunny"
    }
    assert result.usage.total_tokens == 28
