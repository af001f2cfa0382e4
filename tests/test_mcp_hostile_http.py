"""MCPClient against hostile streamable-HTTP servers: handshake errors, responses without the
answer, bad session ids, stalled bodies, and events too large or unreadable."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from agentmaker import MCPClient, ToolError
from mcp_servers.recording_http import RecordingServer


async def test_http_handshake_errors_name_the_cause_not_rmcps_types(refused_port):
    with pytest.raises(ToolError) as e:
        async with MCPClient(url=f"http://127.0.0.1:{refused_port}/mcp", namespace="x", timeout=10):
            pass
    assert "rmcp::" not in str(e.value) and "Transport [" not in str(e.value), str(e.value)
    assert "transport error: " in str(e.value)


async def test_an_http_response_without_the_answer_fails_the_call_at_once():
    """A 202, or a JSON body answering another id, leaves nothing that could answer the call:
    it used to wait for its timeout, for ever with timeout=None."""
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=None) as client:
            (whoami,) = await client.load_tools()
            for mode, why in [
                ("accepted", r"without answering it \(HTTP 202 or 204\)"),
                ("other_id", "JSON response to request .* is not its answer"),
            ]:
                server.call_unanswered = mode
                r = await asyncio.wait_for(whoami.arun({}), 10)
                assert r.status == "error" and re.search(why, r.text), r.text
            server.call_unanswered = None
            assert (await whoami.arun({})).status == "success"


async def test_a_session_id_that_is_not_visible_ascii_is_refused_saying_so():
    """The protocol allows only visible ASCII in Mcp-Session-Id; rmcp dropped any other id,
    and the session's later requests went out without one."""
    with RecordingServer() as server:
        for bad in ("sess-\xe9", "session 2"):
            server.session_id = bad
            with pytest.raises(ToolError, match=r"Mcp-Session-Id is not visible ASCII \(0x21-0x7E\)"):
                async with MCPClient(url=server.url, namespace="rec", timeout=10):
                    pass
        server.session_id = "session-3"
        async with MCPClient(url=server.url, namespace="rec", timeout=10) as client:
            assert len(await client.load_tools()) == 1
        assert server.requests[-1][1].get("mcp-session-id") == "session-3"


async def test_a_failed_json_body_that_stalls_does_not_hold_the_call():
    """A JSON body of a failed response is read whole (it may hold the JSON-RPC error), but
    one that stalls is given up on as a diagnostic's would be, not waited for to the timeout."""
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=60) as client:
            (whoami,) = await client.load_tools()
            server.call_failure = (
                500,
                "application/json",
                b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"backend down"}}',
            )
            server.call_failure_stall = 5.0
            r = await whoami.arun({})
            assert r.status == "error"
            assert "HTTP 500 Internal Server Error: (its JSON body did not arrive within 1 s)" in r.text, (
                r.text
            )


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ("[" * 1000 + "]" * 1000, "recursion limit exceeded"),
        ('"a string is not a CallToolResult"', "Unexpected response type"),
        (
            # A tools/call answer in one JSON body is read up to 16 MiB, like an event.
            '{"content": [{"type": "text", "text": "%s"}]}' % ("y" * 20_000_000),
            "HTTP response body exceeded the maximum size of 16777216 bytes",
        ),
    ],
    ids=["1000-deep", "wrong-shape", "20MB"],
)
async def test_hostile_http_answers_become_errors_and_the_session_survives(result, message):
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=10) as client:
            (whoami,) = await client.load_tools()
            server.call_result_text = result
            r = await whoami.arun({})
            assert (
                r.status == "error"
                and r.text.startswith("Error: the MCP tool call failed")
                and message in r.text
            )
            server.call_result_text = None
            assert (await whoami.arun({})).text == "<none>"


async def test_http_answers_in_one_json_body_are_read_like_events():
    """The JSON body answering tools/call is read by us, not parsed whole by rmcp first: a
    plain 3 MB text is fine (it was refused past 2 MiB to bound memory), a lone surrogate
    becomes U+FFFD (it failed the call), and a failed request shows what the server said."""
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=10, max_result_chars=10**7) as client:
            (whoami,) = await client.load_tools()
            server.call_result_text = '{"content": [{"type": "text", "text": "%s"}]}' % ("y" * 3_000_000)
            r = await whoami.arun({})
            assert (r.status, len(r.text)) == ("success", 3_000_000)
            server.call_result_text = '{"content": [{"type": "text", "text": "a\\ud800b"}]}'
            assert (await whoami.arun({})).text == "a\ufffdb"
            server.call_result_text = None
            server.call_failure = (502, "text/plain", b"upstream mcp-backend timed out\x1b[2J\n")
            r = await whoami.arun({})
            assert r.status == "error"
            assert r.text == (
                "Error: the MCP tool call failed: transport error: unexpected server response: "
                "HTTP 502 Bad Gateway: upstream mcp-backend timed out[2J"
            ), r.text
            # A JSON-RPC error in a failed response's JSON body is that error.
            server.call_failure = (
                500,
                "application/json",
                b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"backend down"}}',
            )
            r = await whoami.arun({})
            assert r.text == "Error: the MCP tool call failed: backend down (code -32000)", r.text
            # A large error page shows its start; a body that stalls does not hold the call
            # (nor does one that breaks off).
            server.call_failure = (400, "text/html", b"<h1>Blocked by the firewall</h1>" + b"." * 200_000)
            r = await whoami.arun({})
            assert "HTTP 400 Bad Request: <h1>Blocked by the firewall</h1>...." in r.text, r.text
            assert r.text.endswith("…(truncated)")
            server.call_failure = (503, "text/plain", b"overloaded, retry later")
            server.call_failure_stall = 5.0
            start = time.monotonic()
            r = await whoami.arun({})
            assert time.monotonic() - start < 3
            assert r.text.endswith("HTTP 503 Service Unavailable: overloaded, retry later"), r.text
            server.call_failure_stall = 0.0
            # A success whose JSON is no JSON-RPC message shows what it was.
            server.call_failure = (200, "application/json", b"<html>Sign in to continue</html>")
            r = await whoami.arun({})
            assert "is not a JSON-RPC message" in r.text and "<html>Sign in to continue</html>" in r.text, (
                r.text
            )
            server.call_failure = None
            assert (await whoami.arun({})).text == "<none>"
            # The listing is read the same way, surrogates included.
            server.list_result_text = '{"tools": [{"name": "whoami", "description": "x\\udc00y", "inputSchema": {"type": "object"}}]}'
            (again,) = await client.load_tools()
            assert again.description == "x\ufffdy"


async def test_an_http_event_too_large_to_read_fails_its_call_saying_so():
    """rmcp ends an event stream at an event over 16 MiB; the call it answers fails with that
    reason (it read "the MCP server closed the connection"), and the session goes on."""
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=10) as client:
            (whoami,) = await client.load_tools()
            server.call_as_sse = True
            server.call_result_text = '{"content": [{"type": "text", "text": "%s"}]}' % ("y" * 17_000_000)
            r = await whoami.arun({})
            assert r.status == "error"
            assert r.text == (
                "Error: the MCP tool call failed: SSE event exceeded the maximum size of 16777216 bytes; "
                "the answer was not read (code -32603)"
            )
            server.call_result_text = None
            assert (await whoami.arun({})).text == "<none>"


async def test_an_http_event_answering_a_call_that_cannot_be_read_fails_it_at_once():
    """rmcp skips an event it cannot read, so a garbled answer on a stream the server holds
    open left the call waiting for its timeout (for ever with timeout=None); it fails at once
    saying why, as over stdio."""
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=None) as client:
            (whoami,) = await client.load_tools()
            server.call_as_sse = server.call_stream_held = True
            for result, why in [
                ('{"content": [', "the server's answer is not valid JSON"),
                ("[" * 150 + "]" * 150, "nested deeper than 100 levels"),
            ]:
                server.call_result_text = result
                r = await asyncio.wait_for(whoami.arun({}), 10)
                assert r.status == "error" and why in r.text, r.text
            server.call_result_text = None
            assert (await whoami.arun({})).text == "<none>"


async def test_an_event_too_large_on_a_resumed_stream_fails_its_call_saying_so():
    """A call's event stream that breaks off is resumed with GET after its last event id; that
    stream does not say which request it answers, and an event too large on it read as "the
    server closed the connection"."""
    with RecordingServer() as server:
        async with MCPClient(url=server.url, namespace="rec", timeout=30) as client:
            (whoami,) = await client.load_tools()
            server.call_resumed_answer = '{"content": [{"type": "text", "text": "resumed"}]}'
            assert (await whoami.arun({})).text == "resumed"
            assert any(h.get("last-event-id") == "ev-1" for m, h in server.requests if m == "GET")
            server.call_resumed_answer = '{"content": [{"type": "text", "text": "%s"}]}' % ("y" * 17_000_000)
            r = await whoami.arun({})
            assert r.text == (
                "Error: the MCP tool call failed: SSE event exceeded the maximum size of 16777216 bytes; "
                "the answer was not read (code -32603)"
            ), r.text
            server.call_resumed_answer = None
            assert (await whoami.arun({})).text == "<none>"
