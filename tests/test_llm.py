"""LLMClient against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agentmaker import Agent, LLMClient, LLMResponseError, Tool, ToolParameter, ToolResponse
from agentmaker.llm import parse_chat_completion


class FakeOpenAI:
    """A chat-completions endpoint that replays canned replies and records requests."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests: list[tuple[str, dict, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, self.headers, body))  # case-insensitive names
                status, reply = outer.replies.pop(0)
                data = reply.encode() if isinstance(reply, str) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def completion(content=None, tool_calls=None, usage=None, finish="stop"):
    message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": "x",
        "model": "fake-1",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = usage
    return (200, body)


class Weather(Tool):
    def __init__(self):
        super().__init__("get_weather", "Weather for a city.")

    def get_parameters(self):
        return [ToolParameter("city", "string", "City name.")]

    def run(self, parameters):
        return ToolResponse.ok(f"{parameters['city']}: sunny, 22C")


def test_agent_run_over_http():
    call = {
        "id": "call_a",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    replies = [
        completion(
            None, [call], {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}, "tool_calls"
        ),
        completion("Sunny in Oslo.", usage={"prompt_tokens": 70, "completion_tokens": 5, "total_tokens": 75}),
    ]
    with FakeOpenAI(replies) as server:
        llm = LLMClient("fake-1", base_url=server.url, api_key="sk-test-key", temperature=0)
        result = Agent("w", llm, tools=[Weather()]).run("Weather in Oslo?")
    assert result.final_output == "Sunny in Oslo."
    assert result.usage.total_tokens == 135
    (path, headers, first), (_, _, second) = server.requests
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test-key"
    assert first["model"] == "fake-1" and first["temperature"] == 0
    assert first["tools"][0]["function"]["name"] == "get_weather"
    assert first["messages"][-1] == {"role": "user", "content": "Weather in Oslo?"}
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_a", "content": "Oslo: sunny, 22C"}
    assert second["messages"][-2]["tool_calls"] == [call]


def test_no_tools_means_no_tools_key_and_async_path():
    with FakeOpenAI([completion("hello")]) as server:
        llm = LLMClient("m", base_url=server.url, api_key="")
        result = asyncio.run(Agent("a", llm).arun("hi"))
    assert result.final_output == "hello"
    _, headers, body = server.requests[0]
    assert "tools" not in body and "Authorization" not in headers


def test_http_errors_raise_llm_response_error():
    with FakeOpenAI([(401, {"error": {"message": "bad key"}})]) as server:
        llm = LLMClient("m", base_url=server.url, api_key="nope")
        with pytest.raises(LLMResponseError, match="HTTP 401.*bad key") as info:
            llm.chat([{"role": "user", "content": "x"}])
    assert info.value.status == 401


def test_unreachable_endpoint(refused_port):
    llm = LLMClient("m", base_url=f"http://127.0.0.1:{refused_port}/v1", timeout=2)
    with pytest.raises(LLMResponseError, match="could not reach"):
        llm.chat([])


def test_parse_chat_completion_edge_cases():
    with pytest.raises(LLMResponseError, match="did not return JSON"):
        parse_chat_completion(b"<html>")
    with pytest.raises(LLMResponseError, match="no choices"):
        parse_chat_completion({"choices": []})
    with pytest.raises(LLMResponseError, match="returned an error"):
        parse_chat_completion({"error": "quota"})
    resp = parse_chat_completion(
        {
            "choices": [
                {
                    "message": {
                        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                        "reasoning_content": "hmm",
                    }
                }
            ]
        }
    )
    assert resp.content == "ab" and resp.assistant_message == {"reasoning_content": "hmm"}


def test_constructor_checks_and_repr_hides_key():
    with pytest.raises(ValueError, match="model name"):
        LLMClient("")
    with pytest.raises(ValueError, match="http:// or https://"):
        LLMClient("m", base_url="ftp://x")
    with pytest.raises(ValueError, match="timeout"):
        LLMClient("m", base_url="http://127.0.0.1:1", timeout=0)
    assert "secret" not in repr(LLMClient("m", base_url="http://127.0.0.1:1", api_key="secret"))


def test_a_loopback_base_url_bypasses_the_proxy_and_a_lookalike_name_does_not(monkeypatch):
    # The fake server doubles as the proxy: a request that went through it names its whole URL.
    with FakeOpenAI([completion("direct"), completion("direct"), completion("proxied")]) as server:
        port = server.server.server_address[1]
        for var in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
        for base in (f"http://127.0.0.1:{port}/v1", f"http://LOCALHOST:{port}/v1"):
            assert LLMClient("m", base_url=base, api_key="").chat([]).content == "direct"
        # A name that merely starts like a loopback address is not this machine.
        lookalike = LLMClient("m", base_url="http://127.lookalike.invalid/v1", api_key="")
        assert lookalike.chat([]).content == "proxied"
    paths = [path for path, _, _ in server.requests]
    assert paths == [
        "/v1/chat/completions",
        "/v1/chat/completions",
        "http://127.lookalike.invalid/v1/chat/completions",
    ]
