"""Tools for tests/test_isolation.py, at module level so that worker processes can import them."""

from __future__ import annotations

import asyncio
import ctypes
import os
import subprocess
import time
from pathlib import Path

from agentmaker import Isolation, StopAgentRun, Tool, ToolResponse, tool

LIMITED = Isolation(memory_mb=300, cpu_seconds=1, open_files=32, warm=1, grace_seconds=0.5)


def _note(marker: str, *pids: int) -> None:
    with open(marker, "a") as f:
        f.write(" ".join(map(str, pids)) + "\n")


@tool(isolate=True)
def where() -> int:
    """The process the tool runs in."""
    return os.getpid()


@tool
def plain_where() -> int:
    """The process the tool runs in (not isolated by itself)."""
    return os.getpid()


@tool(isolate=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(isolate=True, timeout=0.2)
def spin(marker: str) -> str:
    """Busy-loop forever."""
    _note(marker, os.getpid())
    while True:
        pass


@tool(isolate=True, timeout=0.3)
def hang_with_child(marker: str) -> str:
    """Start a grandchild, then hang."""
    child = subprocess.Popen(["sleep", "60"])
    _note(marker, os.getpid(), child.pid)
    time.sleep(60)
    return "unreachable"


@tool(isolate=True)
def nap(marker: str, seconds: float) -> str:
    """Sleep (the caller cancels it)."""
    _note(marker, os.getpid())
    time.sleep(seconds)
    return "rested"


@tool(isolate=LIMITED)
def hog(megabytes: int) -> int:
    """Allocate memory."""
    block = bytearray(megabytes * 1024 * 1024)
    return len(block)


@tool(isolate=LIMITED)
def burn() -> str:
    """Use CPU without end."""
    while True:
        pass


@tool(isolate=LIMITED)
def open_many(directory: str) -> int:
    """Open many files."""
    files = [open(Path(directory) / f"f{i}", "w") for i in range(100)]  # noqa: SIM115
    return len(files)


@tool(isolate=LIMITED)
def limited_add(a: int, b: int) -> int:
    """Add two numbers under the limits."""
    return a + b


@tool(isolate=True)
def exit_hard(code: int) -> str:
    """End the worker at once."""
    os._exit(code)


@tool(isolate=True)
def segfault() -> str:
    """Crash the worker."""
    ctypes.string_at(0)
    return "unreachable"


@tool(isolate=True)
def fail(message: str) -> str:
    """Raise."""
    raise ValueError(message)


@tool(isolate=True)
def finish_run(message: str) -> str:
    """End the agent's run."""
    raise StopAgentRun(message)


@tool(isolate=True)
async def async_add(a: int, b: int) -> int:
    """Add two numbers, asynchronously."""
    await asyncio.sleep(0)
    return a + b


class Pid(Tool):
    isolate = True

    def __init__(self) -> None:
        super().__init__("class_pid", "The process the tool runs in.")

    def run(self, parameters):
        return ToolResponse.ok(str(os.getpid()))
