"""Serving tools over MCP: our server (`python -m agentmaker serve`) against the official
Python SDK's server (FastMCP / MCPServer) with the same tool and the same client, over stdio and
streamable HTTP, with two clients in turn: the official SDK client, and our MCPClient (whose
own cost is small, so the servers' difference shows); then 1,000 concurrent calls over HTTP.

Goal (issue 22): a round trip of a trivial tool at least 5x faster on our server.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from agentmaker import MCPClient
from harness import awaited_per_call_us, report
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from mcp import ClientSession, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SDK_SERVER = TESTS / "mcp_servers" / "sdk_server.py"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
OURS = [sys.executable, "-m", "agentmaker", "serve", "mcp_servers.served_tools:tools"]
THEIRS = [sys.executable, str(SDK_SERVER)]
N = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_listening(cmd: list[str], port: int) -> subprocess.Popen[bytes]:
    """Start an HTTP server process and wait until it accepts connections."""
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(2000):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.01)
    proc.kill()
    raise RuntimeError(f"{cmd} did not listen on {port}")


@asynccontextmanager
async def stdio_session(cmd: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=ENV)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


@asynccontextmanager
async def http_session(cmd: list[str], port: int) -> AsyncIterator[ClientSession]:
    proc = spawn_listening(cmd, port)
    try:
        limits = httpx2.Limits(max_connections=200)
        async with (
            httpx2.AsyncClient(timeout=120, limits=limits) as http,
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            yield s
    finally:
        proc.terminate()
        proc.wait(30)


def add_call(s: ClientSession) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        out = await s.call_tool("add", {"a": 2, "b": 3})
        assert not out.is_error and out.content[0].text == "5", out
        return out

    return call


@asynccontextmanager
async def our_client(cmd: list[str], port: int | None) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    """Our MCPClient on the server `cmd` (stdio when `port` is None); yields one add call."""
    proc = None
    if port is None:
        client = MCPClient(command=cmd[0], args=cmd[1:], env=ENV, namespace="b", requires_confirmation=False)
    else:
        proc = spawn_listening(cmd, port)
        client = MCPClient(url=f"http://127.0.0.1:{port}/mcp", namespace="b", requires_confirmation=False)
    try:
        async with client:
            add = {t.remote_name: t for t in await client.load_tools()}["add"]

            async def call() -> Any:
                out = await add.arun({"a": 2, "b": 3})
                assert out.text == "5", out.text
                return out

            yield call
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(30)


async def round_trips_our_client() -> None:
    for transport in ("stdio", "http"):
        p1, p2 = (None, None) if transport == "stdio" else (free_port(), free_port())
        ours_cmd = OURS if p1 is None else [*OURS, "--transport", "http", "--port", str(p1)]
        theirs_cmd = THEIRS if p2 is None else [*THEIRS, "http", str(p2)]
        async with our_client(ours_cmd, p1) as call:
            ours = await awaited_per_call_us(call, N, repeat=3, warmup=30)
        async with our_client(theirs_cmd, p2) as call:
            theirs = await awaited_per_call_us(call, N, repeat=3, warmup=30)
        report(
            "serve",
            f"{transport}: add round trip, our server (our MCPClient)",
            ours,
            note=f"SDK server {theirs:.0f} µs, ours {theirs / ours:.2f}x faster (goal >= 5x)",
        )


async def round_trips() -> None:
    for transport in ("stdio", "http"):
        if transport == "stdio":
            ours_cm, theirs_cm = stdio_session(OURS), stdio_session(THEIRS)
        else:
            p1, p2 = free_port(), free_port()
            ours_cm = http_session([*OURS, "--transport", "http", "--port", str(p1)], p1)
            theirs_cm = http_session([*THEIRS, "http", str(p2)], p2)
        async with ours_cm as s:
            ours = await awaited_per_call_us(add_call(s), N, repeat=3, warmup=30)
        async with theirs_cm as s:
            theirs = await awaited_per_call_us(add_call(s), N, repeat=3, warmup=30)
        report(
            "serve",
            f"{transport}: add round trip, our server (official client)",
            ours,
            note=f"SDK server {theirs:.0f} µs, ours {theirs / ours:.2f}x faster (goal >= 5x)",
        )


async def thousand_concurrent() -> None:
    for client in ("official client", "our MCPClient"):
        port = free_port()
        cmd = [*OURS, "--transport", "http", "--port", str(port), "--max-concurrent-calls", "2000"]
        if client == "official client":
            async with http_session(cmd, port) as s:
                await burst(add_call(s), client)
        else:
            async with our_client(cmd, port) as call:
                await burst(call, client)


async def burst(call: Callable[[], Awaitable[Any]], client: str) -> None:
    """1,000 concurrent calls; reports the wall time and each call's p50/p99 latency."""
    await call()

    async def timed() -> float:
        start = time.perf_counter_ns()
        await call()
        return (time.perf_counter_ns() - start) / 1000

    start = time.perf_counter_ns()
    latencies = sorted(await asyncio.gather(*(timed() for _ in range(1000))))
    wall = (time.perf_counter_ns() - start) / 1000
    p50 = statistics.median(latencies)
    p99 = latencies[int(len(latencies) * 0.99) - 1]
    report(
        "serve",
        f"http: 1,000 concurrent add calls, all succeeded ({client}, wall)",
        wall,
        note=f"p50 {p50 / 1000:.1f} ms, p99 {p99 / 1000:.1f} ms",
    )


def main() -> None:
    asyncio.run(round_trips())
    asyncio.run(round_trips_our_client())
    asyncio.run(thousand_concurrent())


if __name__ == "__main__":
    main()
