"""What the MCP client tests share: the test servers, clients of them, and process checks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentmaker import MCPClient, MCPTool
from timeout_once_started import wait_for_once_started

SERVERS = Path(__file__).resolve().parent / "mcp_servers"
SDK = str(SERVERS / "sdk_server.py")
RAW = str(SERVERS / "raw_server.py")
RECORDING = str(SERVERS / "recording_http.py")
NO_SESSION = "Error: the MCP session is not established or has been closed"


def sdk_client(*server_args: str, **kw) -> MCPClient:
    kw.setdefault("namespace", "calc")
    kw.setdefault("timeout", 30.0)
    return MCPClient(command=sys.executable, args=[SDK, *server_args], **kw)


def raw_client(mode: str, **kw) -> MCPClient:
    kw.setdefault("namespace", "raw")
    kw.setdefault("timeout", 10.0)
    return MCPClient(command=sys.executable, args=[RAW, mode], **kw)


def by_remote(tools: list[MCPTool]) -> dict[str, MCPTool]:
    return {t.remote_name: t for t in tools}


def _cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""


@contextlib.contextmanager
def sdk_http_server(env: dict[str, str] | None = None):
    """The SDK server over streamable HTTP on a free 127.0.0.1 port; yields its URL. `env` is
    added to this process's environment (e.g. ``PYTHONPATH`` for the 1.x SDK).

    The listening socket is made here and handed to the server: the port is held from the
    start (a port picked free here and bound by the server later could be taken meanwhile),
    and connections made before the server accepts wait in the socket's backlog."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port = listener.getsockname()[1]
        proc = subprocess.Popen(
            [sys.executable, SDK, "http", "--fd", str(listener.fileno())],
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=[listener.fileno()],
        )
    try:
        _wait_for_an_http_answer(proc, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()


def _wait_for_an_http_answer(proc: subprocess.Popen, port: int) -> None:
    """Until the server answers a request on ``port`` (any status will do); a server that
    exits first, or answers nothing for a minute, is reported with its stderr."""
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
                conn.sendall(b"GET /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                if conn.recv(1):
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the SDK HTTP server did not start: {proc.stderr.read()!r}")
        time.sleep(0.05)


def started_file(marker: Path) -> Path:
    """The file ``slow_write`` creates when the server starts the call that would write ``marker``."""
    return marker.with_name(f"{marker.name}.started")


def slow_write_args(marker: Path, seconds: float) -> dict:
    """``slow_write``'s arguments: write ``marker`` after ``seconds``, signalling the start."""
    return {"path": str(marker), "seconds": seconds, "started": str(started_file(marker))}


def wait_started(*markers: Path, bound: float = 30.0) -> None:
    """Until the server has started the ``slow_write`` call of each marker (a call cancelled
    before this tests "cancelled before it was sent", not "cancelled at the server")."""
    deadline = time.monotonic() + bound
    while missing := [m.name for m in markers if not started_file(m).exists()]:
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {bound:g} s: the server never started the call(s) {missing}")
        time.sleep(0.01)


async def until_started(*markers: Path) -> None:
    """``wait_started`` without blocking the loop (nor waiting on its clock)."""
    await asyncio.to_thread(wait_started, *markers)


async def wait_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


class LoopWithoutReaders(asyncio.SelectorEventLoop):
    """A loop that cannot watch file descriptors (as Windows' proactor loop cannot)."""

    def add_reader(self, *args, **kwargs):
        raise NotImplementedError


async def check_wait_for_cancels_at_the_server(tools: dict[str, MCPTool], marker: Path) -> None:
    """A 3 s ``slow_write`` abandoned by ``asyncio.wait_for`` 0.3 s after the server started it
    never writes its marker (the server was told), and the session still answers."""
    with pytest.raises(TimeoutError):
        call = tools["slow_write"].arun(slow_write_args(marker, 3))
        await wait_for_once_started(call, lambda: until_started(marker), 0.3)
    cancelled = time.monotonic()
    assert (await tools["add"].arun({"a": 1, "b": 1})).text == "2"
    await wait_until(cancelled + 4.5)
    assert not marker.exists()
