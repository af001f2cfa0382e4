"""A registry served over streamable HTTP on 127.0.0.1, in this process, talked to by the
official Python SDK client, by our MCPClient and by raw HTTP requests (for the gates)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from agentmaker import Agent, MCPClient, ToolPermissions, ToolRegistry, tool
from agentmaker.testing import ScriptedLLM
from mcp.client.streamable_http import streamable_http_client
from mcp_servers import served_tools

from mcp import ClientSession, types


def registry() -> ToolRegistry:
    reg = served_tools.build()
    reg.register(served_tools.wait)
    reg.register(served_tools.steps)
    reg.register(served_tools.sync_steps)
    return reg


@contextlib.asynccontextmanager
async def serving(reg: ToolRegistry, **options: Any) -> AsyncIterator[str]:
    """Serve ``reg`` on a free port of 127.0.0.1 while the block runs; yields the URL."""
    served_tools.release = asyncio.Event()
    served_tools.running.clear()
    served_tools.cancelled.clear()
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[str] = loop.create_future()
    task = asyncio.create_task(reg.aserve_mcp(port=0, on_ready=ready.set_result, **options))
    done, _ = await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()  # raises why it did not start
    try:
        yield ready.result()
    finally:
        served_tools.release.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def session(url: str, headers: dict[str, str] | None = None, **kw: Any) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, **kw) as s,
    ):
        await s.initialize()
        yield s


async def until(check: Any) -> None:
    """Wait (in loop turns, never a clock) until ``check()`` holds; a safety net of 30 s."""
    async with asyncio.timeout(30):
        while not check():
            await asyncio.sleep(0.005)


def raw(url: str, body: bytes, headers: dict[str, str], method: str = "POST") -> tuple[int, str]:
    """One request with exactly these headers (http.client sends Host itself unless given)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.putrequest(method, parts.path, skip_host="Host" in headers)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
).encode()
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def post(url: str, body: bytes, **headers: str) -> tuple[int, str]:
    return await asyncio.to_thread(raw, url, body, {**JSON_HEADERS, **headers})


async def test_the_official_client_lists_and_calls_over_http():
    async with serving(registry()) as url, session(url) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert sorted(tools) == [
            "add",
            "add_where",
            "nap",
            "point",
            "steps",
            "sync_steps",
            "wait",
            "whoami",
            "wipe",
        ]
        assert tools["add"].annotations.read_only_hint is True
        out = await s.call_tool("add", {"a": 1, "b": 2})
        assert (out.is_error, out.content[0].text, out.structured_content) == (False, "3", {"result": 3})


async def test_denied_tools_are_not_listed_and_refused_with_the_agents_text():
    perms = ToolPermissions(deny=["wipe", "nap"])
    async with serving(registry(), permissions=perms) as url, session(url) as s:
        names = sorted(t.name for t in (await s.list_tools()).tools)
        assert names == ["add", "add_where", "point", "steps", "sync_steps", "wait", "whoami"]
        out = await s.call_tool("wipe", {"path": "x"})
    llm = ScriptedLLM([ScriptedLLM.tool_call("wipe", {"path": "x"}), "ok"])
    agent = Agent("a", llm, tools=registry(), permissions=perms, confirm=lambda *_: True)
    expected = (await agent.arun("go")).tool_calls[0].output
    assert out.is_error is True
    assert out.content[0].text == expected
    assert "not allowed" in expected


async def test_confirmation_goes_through_elicitation():
    asked: list[str] = []

    def answering(action: str, content: dict | None):
        async def elicit(context, params):
            asked.append(params.message)
            assert params.requested_schema["properties"]["approve"]["type"] == "boolean"
            return types.ElicitResult(action=action, content=content)

        return elicit

    async with serving(registry()) as url:
        async with session(url, elicitation_callback=answering("accept", {"approve": True})) as s:
            out = await s.call_tool("wipe", {"path": "/tmp/a"})
            assert (out.is_error, out.content[0].text) == (False, "wiped /tmp/a")
        assert asked == ['Allow the tool \'wipe\' to run with {"path": "/tmp/a"}?']
        for action, content in (("decline", None), ("accept", {"approve": False}), ("cancel", None)):
            async with session(url, elicitation_callback=answering(action, content)) as s:
                out = await s.call_tool("wipe", {"path": "/tmp/b"})
                assert out.is_error is True
                assert (
                    out.content[0].text == "Error: tool 'wipe' was not approved; the call was not executed."
                )
        async with session(url) as s:  # declares no elicitation: refused, never run
            out = await s.call_tool("wipe", {"path": "/tmp/c"})
            assert out.is_error is True
            assert "does not support elicitation" in out.content[0].text


async def test_a_server_side_confirm_callback_decides_when_given():
    seen: list[tuple[str, dict]] = []

    def confirm(t, args):
        seen.append((t.name, args))
        return args["path"].startswith("/tmp/")

    async with serving(registry(), confirm=confirm) as url, session(url) as s:
        ok = await s.call_tool("wipe", {"path": "/tmp/z"})
        no = await s.call_tool("wipe", {"path": "/etc/z"})
    assert (ok.is_error, ok.content[0].text) == (False, "wiped /tmp/z")
    assert no.is_error is True
    assert seen == [("wipe", {"path": "/tmp/z"}), ("wipe", {"path": "/etc/z"})]


async def test_calls_run_concurrently_and_a_cancelled_call_is_cancelled():
    async with serving(registry()) as url, session(url) as s:
        calls = [asyncio.create_task(s.call_tool("wait", {"tag": t})) for t in ("a", "b", "c")]
        # All three run at once: none can finish before the release.
        await until(lambda: sorted(served_tools.running) == ["a", "b", "c"])
        calls[1].cancel()
        await until(lambda: served_tools.cancelled == ["b"])
        served_tools.release.set()
        a, c = await calls[0], await calls[2]
        assert (a.content[0].text, c.content[0].text) == ("released a", "released c")
        assert served_tools.cancelled == ["b"]
        # The session still serves after a cancellation.
        assert (await s.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"


async def test_progress_reaches_the_client_from_async_and_thread_tools():
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async with serving(registry()) as url, session(url) as s:
        call = asyncio.create_task(s.call_tool("steps", {"n": 2}, progress_callback=on_progress))
        await until(lambda: len(heard) == 1)
        assert heard == [(1.0, 2.0, "first step")]
        served_tools.release.set()
        assert (await call).content[0].text == "all steps"

        heard.clear()
        served_tools.thread_release.clear()
        call = asyncio.create_task(s.call_tool("sync_steps", {"n": 3}, progress_callback=on_progress))
        await until(lambda: len(heard) == 1)
        assert heard == [(1.0, 3.0, "first step")]
        served_tools.thread_release.set()
        assert (await call).content[0].text == "all steps"
        # Without a progress callback (no token) the reports go nowhere.
        served_tools.thread_release.set()
        assert (await s.call_tool("sync_steps", {"n": 3})).content[0].text == "all steps"


def test_report_progress_outside_a_served_call_does_nothing():
    from agentmaker import report_progress

    report_progress(1, 2, "nobody listens")
    with pytest.raises(TypeError, match="progress must be a number"):
        report_progress("half")  # type: ignore[arg-type]


async def test_the_concurrent_call_limit_refuses_clearly():
    async with serving(registry(), max_concurrent_calls=1) as url, session(url) as s:
        first = asyncio.create_task(s.call_tool("wait", {"tag": "only"}))
        await until(lambda: served_tools.running == ["only"])
        busy = await s.call_tool("add", {"a": 1, "b": 1})
        assert busy.is_error is True
        assert busy.content[0].text == (
            "Error: the server is already running 1 calls, its limit (max_concurrent_calls); "
            "the call was not run. Try again when one finishes."
        )
        served_tools.release.set()
        assert (await first).content[0].text == "released only"
        assert (await s.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"


async def test_request_size_host_and_origin_gates():
    async with serving(registry(), max_request_bytes=2000) as url:
        port = urlsplit(url).port
        assert (await post(url, INIT))[0] == 200
        status, text = await post(url, INIT + b" " * 5000)
        assert status == 413, text
        status, _ = await post(url, INIT, Host=f"evil.example:{port}")
        assert status == 403
        status, _ = await post(url, INIT, Origin="http://evil.example")
        assert status == 403
        assert (await post(url, INIT, Origin=f"http://localhost:{port}"))[0] == 200
        status, text = await post(url.replace("/mcp", "/other"), INIT)
        assert (status, text) == (404, "404 Not Found: this MCP server answers at /mcp")


async def test_a_client_ends_its_session_with_delete():
    async with serving(registry()) as url:
        init = await asyncio.to_thread(httpx2.post, url, content=INIT, headers=JSON_HEADERS, timeout=30)
        sid = init.headers["mcp-session-id"]
        ended = await asyncio.to_thread(raw, url, b"", {"Mcp-Session-Id": sid}, "DELETE")
        assert ended[0] == 204
        after = await post(url, INIT.replace(b'"initialize"', b'"tools/list"'), **{"Mcp-Session-Id": sid})
        assert after[0] == 404


async def test_a_token_guards_the_server():
    async with serving(registry(), token="s3cret") as url:
        status, text = await post(url, INIT)
        assert status == 401
        assert "Authorization" in text
        assert (await post(url, INIT, Authorization="Bearer wrong"))[0] == 401
        async with session(url, headers={"Authorization": "Bearer s3cret"}) as s:
            assert (await s.call_tool("add", {"a": 2, "b": 2})).content[0].text == "4"


async def test_an_authorize_callable_sees_the_header():
    seen: list[str | None] = []

    def authorize(header: str | None) -> bool:
        seen.append(header)
        return header == "Token abc"

    async with serving(registry(), authorize=authorize) as url:
        assert (await post(url, INIT))[0] == 401
        assert (await post(url, INIT, Authorization="Token abc"))[0] == 200
    assert seen == [None, "Token abc"]


async def test_other_addresses_need_allow_remote_and_a_token():
    reg = registry()
    with pytest.raises(ValueError, match="allow_remote=True"):
        await reg.aserve_mcp(host="0.0.0.0", port=0)
    with pytest.raises(ValueError, match="needs token"):
        await reg.aserve_mcp(host="0.0.0.0", port=0, allow_remote=True)
    with pytest.raises(ValueError, match="allowed_hosts"):
        await reg.aserve_mcp(host="0.0.0.0", port=0, allow_remote=True, token="t")
    with pytest.raises(ValueError, match="host must be an IP address"):
        await reg.aserve_mcp(host="example.com", port=0)


async def test_clients_hear_when_the_registry_changes():
    heard = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    reg = registry()
    async with serving(reg) as url, session(url, message_handler=on_message) as s:
        assert "late" not in [t.name for t in (await s.list_tools()).tools]

        @tool
        def late() -> str:
            """Registered while serving."""
            return "here"

        reg.register(late)
        async with asyncio.timeout(30):
            await heard.wait()
        assert "late" in [t.name for t in (await s.list_tools()).tools]
        assert (await s.call_tool("late", {})).content[0].text == "here"


async def test_a_failing_on_ready_stops_the_listener():
    port: list[int] = []

    def on_ready(url: str) -> None:
        port.append(int(urlsplit(url).port or 0))
        raise RuntimeError("no thanks")

    with pytest.raises(RuntimeError, match="no thanks"):
        await registry().aserve_mcp(port=0, on_ready=on_ready)

    def refused() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port[0])) != 0

    await until(refused)


async def test_our_client_calls_the_served_tools_over_http():
    async with serving(registry()) as url:
        client = MCPClient(url=url, namespace="web", requires_confirmation=False, timeout=30)
        async with client:
            tools = {t.remote_name: t for t in await client.load_tools()}
            assert tools["add"].name == "web_add"
            response = await tools["add"].arun({"a": 5, "b": 6})
            assert response.text == "11"
            bad = await tools["wipe"].arun({"path": "/x"})
            assert bad.is_error
            assert "does not support elicitation" in bad.text
