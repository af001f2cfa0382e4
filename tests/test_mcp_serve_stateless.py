"""Stateless serving (``--stateless``): no session between requests, so requests can land on
any of several server processes, as behind a load balancer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import agentmaker
import httpx2
from mcp.client.streamable_http import streamable_http_client

from mcp import ClientSession

TESTS = Path(__file__).resolve().parent
# The agentmaker the tests import (installed in CI, the source tree in a dev setup): the
# server processes must run the same build.
PYTHON_DIR = str(Path(agentmaker.__file__).resolve().parents[1])
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
    """`python -m agentmaker serve` over HTTP in a subprocess; yields its URL once it listens.

    It binds a port of its own choosing (``--port 0``) and names it in its ready line: a port
    picked here and bound there later could be taken by anything on the machine meanwhile."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, str(TESTS)]))
    cmd = [sys.executable, "-m", "agentmaker", "serve", "mcp_servers.served_tools:registry"]
    cmd += ["--transport", "http", "--port", "0", *extra]
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


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream mcp {{ {upstreams} }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host:$server_port;
            proxy_buffering off;
        }}
    }}
}}
"""


def nginx_binary() -> str:
    for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"):
        if os.path.exists(path):
            return path
    raise AssertionError(
        "nginx is not installed (Debian: bash scripts/install_test_programs.sh installs nginx-light)"
    )


@contextmanager
def nginx(tmp: Path, backends: list[str]) -> Iterator[str]:
    """A real nginx on 127.0.0.1 balancing over ``backends``; yields its MCP URL once it listens
    (it cannot name a port it chose, so it is given one that was free a moment ago)."""
    port = free_port()
    upstreams = " ".join(f"server {u.split('//')[1].split('/')[0]};" for u in backends)
    conf = tmp / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=tmp, upstreams=upstreams, port=port))
    proc = subprocess.Popen([nginx_binary(), "-c", str(conf), "-p", str(tmp)], stderr=subprocess.DEVNULL)
    try:
        # nginx writes its pid file once its listening socket is bound (a port taken meanwhile
        # makes it exit instead), so connections from then on reach this nginx. A connect
        # that is refused returns at once: the wait is bounded by a clock, not by a count of
        # tries, because a busy machine may take seconds to start nginx.
        pidfile = tmp / "nginx.pid"
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text().strip() == str(proc.pid)):
            assert proc.poll() is None, (tmp / "error.log").read_text()
            assert time.monotonic() < deadline, "nginx did not start within 60 s"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_two_stateless_servers_behind_nginx_serve_200_calls(tmp_path):
    with server("--stateless") as a, server("--stateless") as b, nginx(tmp_path, [a, b]) as url:
        async with (
            httpx2.AsyncClient(timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            served_by: dict[str, int] = {}
            for i in range(200):
                out = await s.call_tool("add_where", {"a": i, "b": 1000})
                assert out.is_error is False
                total, pid = out.content[0].text.split()
                assert int(total) == i + 1000
                served_by[pid] = served_by.get(pid, 0) + 1
    assert len(served_by) == 2, served_by
    assert sum(served_by.values()) == 200
