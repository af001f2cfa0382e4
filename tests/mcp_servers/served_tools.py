"""Tools that tests serve with ``python -m agentmaker serve mcp_servers.served_tools:...``
(and in process with ``aserve_mcp``)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass

from agentmaker import ToolRegistry, report_progress, tool


@dataclass
class Point:
    x: int
    y: int


@tool(read_only=True, idempotent=True, open_world=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def point(x: int, y: int) -> Point:
    """Make a point."""
    return Point(x, y)


@tool(requires_confirmation=True, destructive=True)
def wipe(path: str) -> str:
    """Pretend to delete a file."""
    return f"wiped {path}"


@tool
def whoami() -> str:
    """The serving process's id (tells load-balanced servers apart)."""
    return str(os.getpid())


@tool
def add_where(a: int, b: int) -> str:
    """The sum and the serving process's id."""
    return f"{a + b} {os.getpid()}"


@tool(supports_parallel=True)
def nap(seconds: float) -> str:
    """A blocking sleep (runs on a worker thread)."""
    time.sleep(seconds)
    return "rested"


# In-process tests look at these: the tags of the `wait` calls running now, the tags of the
# ones cancelled, and the event that lets them all finish.
running: list[str] = []
cancelled: list[str] = []
release: asyncio.Event | None = None


@tool
async def wait(tag: str) -> str:
    """Waits until released (or cancelled)."""
    assert release is not None
    running.append(tag)
    try:
        await release.wait()
    except asyncio.CancelledError:
        cancelled.append(tag)
        raise
    finally:
        running.remove(tag)
    return f"released {tag}"


# Lets `sync_steps` (on a worker thread) finish.
thread_release = threading.Event()


@tool
async def steps(n: int) -> str:
    """Reports progress, then waits to be released."""
    assert release is not None
    report_progress(1, n, "first step")
    await release.wait()
    report_progress(n, n)
    return "all steps"


@tool
def sync_steps(n: int) -> str:
    """Reports progress from a worker thread, then waits to be released."""
    report_progress(1, n, "first step")
    thread_release.wait(30)
    return "all steps"


def build() -> ToolRegistry:
    """The registry the command-line tests serve."""
    reg = ToolRegistry()
    for t in (add, point, wipe, whoami, nap, add_where):
        reg.register(t)
    return reg


registry = build()
tools = [add, whoami]


@tool(requires_confirmation=True)
def touch(path: str) -> str:
    """Create an empty file (so a test can tell whether the call ran)."""
    with open(path, "x"):
        pass
    return f"created {path}"


def gated() -> ToolRegistry:
    """Tools that need the person's approval."""
    reg = ToolRegistry()
    for t in (wipe, touch):
        reg.register(t)
    return reg
