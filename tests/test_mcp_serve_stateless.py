"""Stateless serving (``--stateless``): no session between requests, so requests can land on
any of several server processes, as behind a load balancer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

TESTS = Path(__file__).resolve().parent
PYTHON_DIR = str(TESTS.parent / "python")
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(*extra: str) -> Iterator[str]:
    """`python -m agentmaker serve` over HTTP in a subprocess; yields its URL once it listens."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, str(TESTS)]))
    cmd = [sys.executable, "-m", "agentmaker", "serve", "mcp_servers.served_tools:registry"]
    cmd += ["--transport", "http", "--port", str(free_port()), *extra]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("serving MCP on "), line
        yield line.removeprefix("serving MCP on ").strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def rpc(url: str, method: str, params: dict, rid: int = 1, headers: dict | None = None) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return httpx2.post(url, content=json.dumps(body), headers={**HEADERS, **(headers or {})}, timeout=30)


INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_stateless_requests_stand_alone_across_two_processes():
    with server("--stateless") as a, server("--stateless") as b:
        init = rpc(a, "initialize", INIT)
        assert init.status_code == 200
        assert "mcp-session-id" not in init.headers
        assert init.json()["result"]["serverInfo"]["name"] == "agentmaker"
        # The next requests go to the other process, which never saw an initialize.
        listed = rpc(b, "tools/list", {}, rid=2)
        assert "add" in [t["name"] for t in listed.json()["result"]["tools"]]
        pids = set()
        for url, rid in ((a, 3), (b, 4)):
            called = rpc(url, "tools/call", {"name": "whoami", "arguments": {}}, rid=rid).json()["result"]
            assert called["isError"] is False
            pids.add(called["content"][0]["text"])
        assert len(pids) == 2
        bad = rpc(b, "tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}}, rid=5).json()["result"]
        assert bad["isError"] is True
        assert "failed parameter validation" in bad["content"][0]["text"]


def test_a_session_server_needs_its_session():
    with server() as url:
        init = rpc(url, "initialize", INIT)
        assert init.headers.get("mcp-session-id")
        orphan = rpc(url, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, rid=2)
        assert orphan.status_code in (400, 404)


async def test_the_official_client_works_with_a_stateless_server():
    with server("--stateless") as url:
        async with (
            httpx2.AsyncClient(timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            out = await s.call_tool("add", {"a": 20, "b": 22})
            assert (out.is_error, out.content[0].text) == (False, "42")
