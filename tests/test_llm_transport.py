"""LLMClient's transport against a loopback server: retries, timeouts, error texts, pooled
connections, cancellation, and the key kept out of every message."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from agentmaker import LLMClient, LLMResponseError
from llm_wire_server import Scripted, WireServer, json_reply, sse_reply

USER = [{"role": "user", "content": "hi"}]


def ok(text: str = "fine") -> Scripted:
    return json_reply({"model": "m", "choices": [{"message": {"role": "assistant", "content": text}}]})


def client(server: WireServer, **kw) -> LLMClient:
    return LLMClient("m", base_url=server.url(), api_key=kw.pop("api_key", "sk-k"), **kw)


def test_a_429_is_retried_after_the_wait_retry_after_asks():
    limited = json_reply({"error": {"message": "slow down"}}, 429, **{"Retry-After": "1"})
    with WireServer([limited, ok("after the wait")]) as server:
        started = time.monotonic()
        reply = client(server).chat(USER)
        waited = time.monotonic() - started
    assert reply.content == "after the wait"
    assert len(server.requests) == 2
    assert waited >= 1.0  # the server's one second, not the 0.5 s default backoff


def test_a_500_then_success_is_one_answer():
    with WireServer([json_reply({"error": {"message": "boom"}}, 500), ok("recovered")]) as server:
        assert client(server).chat(USER).content == "recovered"
    assert len(server.requests) == 2


def test_the_final_error_names_status_provider_message_and_attempts():
    busy = json_reply(
        {"error": {"message": "overloaded", "type": "server_error"}}, 503, **{"Retry-After": "0"}
    )
    with WireServer([busy, busy, busy]) as server, pytest.raises(LLMResponseError) as info:
        client(server, max_retries=2).chat(USER)
    assert str(info.value) == (
        "OpenAI-compatible request failed with HTTP 503: server_error: overloaded (after 3 attempts)"
    )
    assert info.value.status == 503 and "overloaded" in (info.value.body or "")
    assert len(server.requests) == 3


def test_a_client_error_is_not_retried():
    with (
        WireServer([json_reply({"error": {"message": "bad request"}}, 400)]) as server,
        pytest.raises(LLMResponseError, match=r"HTTP 400: bad request \(after 1 attempt\)"),
    ):
        client(server, max_retries=5).chat(USER)
    assert len(server.requests) == 1


def test_no_retries_when_max_retries_is_zero():
    with (
        WireServer([json_reply({"error": {"message": "limited"}}, 429, **{"Retry-After": "0"})]) as server,
        pytest.raises(LLMResponseError, match=r"HTTP 429: limited \(after 1 attempt\)"),
    ):
        client(server, max_retries=0).chat(USER)


def test_a_body_that_stalls_past_the_read_timeout_says_so():
    stalled = Scripted(200, {"Content-Type": "application/json"}, chunks=[b'{"choi'], stall=True)
    with WireServer([stalled]) as server:
        with pytest.raises(LLMResponseError) as info:
            client(server, read_timeout=0.3, max_retries=2).chat(USER)
        assert server.hung_up.wait(10)  # the client closed the stalled connection
    assert str(info.value).startswith("the read timeout (0.3s) ran out:")
    assert len(server.requests) == 1  # a read timeout is not retried


def test_a_stream_that_stalls_mid_way_raises_the_read_timeout():
    events = sse_reply([{"choices": [{"delta": {"content": "Hel"}}]}])
    events.stall = True
    with WireServer([events]) as server:
        stream = client(server, read_timeout=0.3).stream(USER)
        assert next(stream) == "Hel"
        with pytest.raises(LLMResponseError, match="read timeout"):
            next(stream)


def test_malformed_json_is_reported_with_what_came():
    with (
        WireServer([json_reply(b'{"choices": [', 200)]) as server,
        pytest.raises(LLMResponseError, match=r'did not return JSON: \{"choices": \[$'),
    ):
        client(server).chat(USER)


def test_a_malformed_stream_event_is_reported():
    with (
        WireServer([sse_reply(["{not json"])]) as server,
        pytest.raises(LLMResponseError, match="did not return JSON"),
    ):
        list(client(server).stream(USER))


def event_stream(body: bytes, piece: int) -> Scripted:
    """``body`` as an event stream sent in pieces of ``piece`` bytes."""
    chunks = [body[i : i + piece] for i in range(0, len(body), piece)]
    return Scripted(200, {"Content-Type": "text/event-stream"}, chunks=chunks)


def test_a_stream_reads_past_lines_the_standard_ignores_and_ends_an_open_last_event():
    def delta(**fields: object) -> bytes:
        return json.dumps({"model": "m", "choices": [{"delta": fields}]}).encode()

    stop = json.dumps({"choices": [{"delta": {}, "finish_reason": "stop"}]}).encode()
    body = b"".join(
        [
            b": keep-alive\r\nid: 1\r\nretry: 3000\r\nvendor-field: x\r\n",
            b"data: " + delta(content="Hel") + b"\r\n\r\n",
            b"id: 2\nid: 3\nretry: soon\nno colon\n",
            b"data: " + delta(content="lo") + b"\n\n",
            b"data: " + stop + b"\n\n",
            b"data: [DONE]",  # the body ends without the event's empty line
        ]
    )
    with WireServer([event_stream(body, 7)]) as server:
        stream = client(server).stream(USER)
        assert list(stream) == ["Hel", "lo"]
    assert stream.response.content == "Hello"
    assert stream.response.finish_reason == "stop"


def test_a_stream_that_is_not_utf8_is_reported():
    body = b'data: {"choices": [{"delta": {"content": "\xff"}}]}\n\n'
    with (
        WireServer([event_stream(body, 1024)]) as server,
        pytest.raises(LLMResponseError, match="not valid server-sent events: utf8"),
    ):
        list(client(server).stream(USER))


@pytest.mark.parametrize(
    ("provider", "body", "expected"),
    [
        (
            "openai",
            {"error": {"message": "Invalid model", "type": "invalid_request_error"}},
            "invalid_request_error: Invalid model",
        ),
        (
            "anthropic",
            {"type": "error", "error": {"type": "not_found_error", "message": "model: x"}},
            "not_found_error: model: x",
        ),
        (
            "gemini",
            {"error": {"code": 404, "message": "models/x is not found", "status": "NOT_FOUND"}},
            "NOT_FOUND: models/x is not found",
        ),
    ],
)
def test_each_providers_error_shape_gives_its_message(provider, body, expected):
    with WireServer([json_reply(body, 404)]) as server:
        llm = LLMClient("x", provider=provider, base_url=server.url(), api_key="k")
        with pytest.raises(LLMResponseError) as info:
            llm.chat(USER)
    assert f"HTTP 404: {expected} (after 1 attempt)" in str(info.value)


def test_the_key_is_in_no_error_repr_or_attribute():
    key = "sk-very-secret-0123"
    echo = json_reply({"error": {"message": f"Incorrect API key provided: {key}"}}, 401)
    with WireServer([echo]) as server:
        llm = client(server, api_key=key)
        with pytest.raises(LLMResponseError) as info:
            llm.chat(USER)
    assert server.requests[0][1]["Authorization"] == f"Bearer {key}"
    shown = [str(info.value), info.value.body or "", repr(llm), repr(vars(llm)), repr(llm._endpoint)]
    assert not [s for s in shown if key in s]
    assert "[redacted]" in str(info.value)


def test_keys_come_from_each_providers_variable(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env-a")
    monkeypatch.setenv("GEMINI_API_KEY", "from-env-g")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    anthropic = {"content": [{"type": "text", "text": "a"}], "model": "c"}
    gemini = {"candidates": [{"content": {"parts": [{"text": "g"}]}}]}
    openai = {"choices": [{"message": {"content": "o"}}]}
    with WireServer([json_reply(anthropic), json_reply(gemini), json_reply(openai)]) as server:
        assert LLMClient("c", provider="anthropic", base_url=server.url()).chat(USER).content == "a"
        assert LLMClient("g", provider="gemini", base_url=server.url()).chat(USER).content == "g"
        assert LLMClient("o", base_url=server.url()).chat(USER).content == "o"
    headers = [h for _, h, _ in server.requests]
    assert headers[0]["x-api-key"] == "from-env-a"
    assert headers[1]["x-goog-api-key"] == "from-env-g"
    assert "Authorization" not in headers[2]  # no key, no header: what local servers accept


def test_calls_of_one_client_reuse_kept_alive_connections():
    with WireServer([ok(str(i)) for i in range(20)]) as server:
        llm = client(server)
        answers = [llm.chat(USER).content for _ in range(20)]
    assert answers == [str(i) for i in range(20)]
    # A connection goes back to the pool just after its body is read, so a call right behind
    # may open another one (more often on a loaded machine); never one per call.
    assert server.connections <= 5


def test_concurrent_async_calls_reuse_pooled_connections():
    async def main(llm):
        first = await asyncio.gather(*(llm.achat(USER) for _ in range(8)))
        second = await asyncio.gather(*(llm.achat(USER) for _ in range(8)))
        return first + second

    with WireServer([ok() for _ in range(16)]) as server:
        replies = asyncio.run(main(client(server)))
    assert [r.content for r in replies] == ["fine"] * 16
    assert server.connections <= 8  # the second wave rode the first wave's connections


def test_cancelling_an_async_call_aborts_the_request():
    stalled = Scripted(200, {"Content-Type": "application/json"}, chunks=[b"{"], stall=True)

    async def main(llm):
        task = asyncio.create_task(llm.achat(USER))
        while not server.requests:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with WireServer([stalled]) as server:
        asyncio.run(main(client(server, read_timeout=60)))
        assert server.hung_up.wait(10)  # the connection was closed, not left to the timeout


def test_an_unreachable_server_is_retried_then_named(refused_port):
    llm = LLMClient("m", base_url=f"http://127.0.0.1:{refused_port}/v1", max_retries=1)
    with pytest.raises(LLMResponseError, match=r"could not reach .*connection failed.*\(after 2 attempts\)"):
        llm.chat(USER)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="provider must be"):
        LLMClient("m", provider="cohere")
    with pytest.raises(ValueError, match="read_timeout"):
        LLMClient("m", base_url="http://127.0.0.1:1", read_timeout=-1)
    with pytest.raises(ValueError, match="max_retries"):
        LLMClient("m", base_url="http://127.0.0.1:1", max_retries=-1)
    with pytest.raises(ValueError, match="header name"):
        LLMClient("m", base_url="http://127.0.0.1:1", headers={"bad name": "x"})
    llm = LLMClient("m", base_url="http://127.0.0.1:1")
    with pytest.raises(TypeError, match="messages must be JSON data"):
        llm.chat([{"role": "user", "content": object()}])


def test_ctrl_c_during_a_sync_call_aborts_it():
    import _thread
    import threading

    stalled = Scripted(200, {"Content-Type": "application/json"}, chunks=[b"{"], stall=True)
    with WireServer([stalled]) as server:

        def interrupt_once_sent() -> None:
            while not server.requests:
                time.sleep(0.01)
            _thread.interrupt_main()  # what Ctrl-C does

        threading.Thread(target=interrupt_once_sent, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            client(server, read_timeout=60).chat(USER)
        assert server.hung_up.wait(10)  # the request was dropped with its connection


def test_cancelling_a_task_reading_a_stream_closes_the_connection():
    events = sse_reply([{"choices": [{"delta": {"content": "Once"}}]}])
    events.stall = True

    async def main(llm):
        seen = []

        async def read():
            async for delta in llm.astream(USER):
                seen.append(delta)

        task = asyncio.create_task(read())
        while not seen:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    with WireServer([events]) as server:
        assert asyncio.run(main(client(server, read_timeout=60))) == ["Once"]
        assert server.hung_up.wait(10)
