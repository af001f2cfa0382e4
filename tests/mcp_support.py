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
from proc_table import alive

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


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


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


async def wait_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


class LoopWithoutReaders(asyncio.SelectorEventLoop):
    """A loop that cannot watch file descriptors (as Windows' proactor loop cannot)."""

    def add_reader(self, *args, **kwargs):
        raise NotImplementedError


async def check_wait_for_cancels_at_the_server(tools: dict[str, MCPTool], marker: Path) -> None:
    """A 3 s ``slow_write`` abandoned by ``asyncio.wait_for`` after 0.3 s never writes its marker
    (the server was told), and the session still answers."""
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(tools["slow_write"].arun({"path": str(marker), "seconds": 3}), 0.3)
    assert (await tools["add"].arun({"a": 1, "b": 1})).text == "2"
    await wait_until(start + 4.5)
    assert not marker.exists()
