"""A real MCP server built with the official Python SDK (1.x FastMCP or 2.x MCPServer).

Usage: sdk_server.py [stdio | http PORT | http --fd FD] [--tools N] [--desc TEXT]
  http --fd FD  serve streamable HTTP on the listening socket inherited as descriptor FD (the
                test binds it, so the port is known and held before this process starts)
  --tools N   also register N trivial tools named tool_000.. (catalog size tests, benchmarks)
  --desc TEXT description of the `echo` tool (pin / rug-pull tests change it between runs)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TypedDict

try:  # SDK 2.x
    from mcp.server.mcpserver import MCPServer as _Server

    SDK_MAJOR = 2
except ImportError:  # SDK 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef]

    SDK_MAJOR = 1

# Which SDK answered, readable by a client through the `env_probe` tool (tests check that the
# 1.x run really used 1.x).
os.environ["AGENTMAKER_TEST_SDK_MAJOR"] = str(SDK_MAJOR)

from mcp.types import EmbeddedResource, ImageContent, TextResourceContents

parser = argparse.ArgumentParser()
parser.add_argument("transport", nargs="?", default="stdio")
parser.add_argument("port", nargs="?", type=int, default=0)
parser.add_argument("--fd", type=int)
parser.add_argument("--tools", type=int, default=0)
parser.add_argument("--desc", default="Echo the text back.")
opts = parser.parse_args()

if SDK_MAJOR == 1 and opts.transport == "http":
    server = _Server("agentmaker-test", host="127.0.0.1", port=opts.port, log_level="WARNING")
else:
    server = _Server("agentmaker-test", log_level="WARNING")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def echo(text: str) -> str:
    return text


echo.__doc__ = opts.desc


async def sleep(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


async def slow_write(path: str, seconds: float, started: str = "") -> str:
    """Create the file `started` names (if any), sleep, then write "finished" to path (a
    cancelled call never writes)."""
    if started:
        with open(started, "w"):  # noqa: ASYNC230 - an empty file, once, in a test server
            pass
    await asyncio.sleep(seconds)
    with open(path, "w") as f:  # noqa: ASYNC230 - a few bytes, once, in a test server
        f.write("finished")
    return "finished"


async def meet(path: str) -> str:
    """Write path + ".started", then wait (at most 20 s) until the client writes path."""
    with open(f"{path}.started", "w"):  # noqa: ASYNC230 - an empty file, once, in a test server
        pass
    for _ in range(2000):
        if os.path.exists(path):
            return "met"
        await asyncio.sleep(0.01)
    return "nobody came"


def big_text(n: int) -> str:
    """Return n characters of text."""
    return "x" * n


def dirty() -> str:
    """Return text with control and bidi characters."""
    return "ok\x1b[31m\u202egnp.exe\u2066 done\x00"


def image() -> list:
    """Return an image and an embedded text resource."""
    return [
        ImageContent(type="image", data="aGVsbG8=", mimeType="image/png"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="file:///notes.txt", mimeType="text/plain", text="resource body"
            ),
        ),
    ]


def fail(reason: str) -> str:
    """Raise an error."""
    raise ValueError(f"refused: {reason}")


class Squares(TypedDict):
    n: int
    squares: list[int]


def structured(n: int) -> Squares:
    """Return structured data."""
    return {"n": n, "squares": [i * i for i in range(n)]}


def crash() -> str:
    """Exit the whole server process in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


def env_probe(name: str) -> str:
    """Report whether an environment variable is visible to the server."""
    return os.environ.get(name, "<unset>")


def pid() -> int:
    """The server's process id."""
    return os.getpid()


def spawn_sleeper() -> int:
    """Start a grandchild process that would outlive the server if nothing killed it."""
    import subprocess

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    return p.pid


for fn in (
    add,
    echo,
    sleep,
    slow_write,
    meet,
    big_text,
    dirty,
    image,
    fail,
    structured,
    crash,
    env_probe,
    pid,
    spawn_sleeper,
):
    server.add_tool(fn)


def _make(i: int):
    def numbered(x: int = 0) -> int:
        return x + i

    numbered.__doc__ = f"Numbered tool {i}."
    return numbered


for i in range(opts.tools):
    server.add_tool(_make(i), name=f"tool_{i:03d}")

if opts.transport == "http" and opts.fd is not None:
    # What the SDK's run("streamable-http") does, on the inherited socket instead of a port.
    import socket

    import uvicorn

    app = server.streamable_http_app(**({"host": "127.0.0.1"} if SDK_MAJOR == 2 else {}))
    listener = socket.socket(fileno=opts.fd)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])
elif opts.transport == "http":
    if SDK_MAJOR == 2:
        server.run("streamable-http", host="127.0.0.1", port=opts.port)
    else:
        server.run("streamable-http")
else:
    server.run("stdio")
