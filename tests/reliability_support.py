"""Shared pieces of the reliability tests: an agent with a shell, and waiting on the process table.

Waits are bounded polls ("gone within 10 s" for a command that would take 30 s): they assert
that something happens, not how fast.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from agentmaker import Agent, CLITool, MCPClient
from agentmaker.testing import ScriptedLLM
from proc_table import Proc, descendants, in_groups

SERVERS = Path(__file__).resolve().parent / "mcp_servers"
RAW = str(SERVERS / "raw_server.py")
#: The command left running when a run is interrupted: far longer than any wait below.
LONG = "sleep 30"
BOUND = 10.0


def approve(tool, args) -> bool:
    return True


def shell_agent(script: list, **kw) -> Agent:
    tools = kw.pop("tools", [CLITool(["sleep", "echo"], timeout=60)])
    return Agent("shell-agent", ScriptedLLM(script), tools=tools, confirm=approve, **kw)


def silent_mcp(seen: Path | None = None) -> MCPClient:
    """A stdio MCP server that lists one tool ``ok`` and never answers a call to it; it creates
    ``seen`` (if given) when a call arrives."""
    args = [RAW, "silent_call", *([str(seen)] if seen else [])]
    return MCPClient(command=sys.executable, args=args, namespace="raw", timeout=None)


def poll(check, what: str, bound: float = BOUND):
    """``check()`` until it returns something truthy; fails after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {bound:g} s: {what}")
        time.sleep(0.02)


def sleepers(root: int | None = None) -> list[Proc]:
    """The ``sleep 30`` commands below ``root`` (this process by default)."""
    below = descendants(os.getpid() if root is None else root)
    return [p for p in below if p.argv[:2] == [b"sleep", b"30"]]


def wait_for_sleepers(n: int, root: int | None = None) -> list[Proc]:
    return poll(
        lambda: (found := sleepers(root)) and len(found) >= n and found, f"{n} sleep command(s) started"
    )


def leftovers(seen: list[Proc], root: int | None = None) -> list[Proc]:
    """What is still alive of the commands in ``seen``: their process groups, their supervisors
    (their parents), and any descendant of ``root`` not there before."""
    alive = in_groups({p.pgid for p in seen})
    supervisors = {p.ppid for p in seen}
    alive += [p for p in descendants(os.getpid() if root is None else root) if p.pid in supervisors]
    return alive


def assert_all_gone(seen: list[Proc], root: int | None = None) -> None:
    assert seen, "no command was seen running"
    try:
        poll(lambda: not leftovers(seen, root), "the commands and their supervisors are gone")
    except AssertionError:
        raise AssertionError(f"still alive: {leftovers(seen, root)}") from None


def assert_no_sleepers(root: int | None = None) -> None:
    """No ``sleep 30`` command (nor anything else new) is left below ``root``."""
    try:
        poll(lambda: not sleepers(root), "the commands are gone")
    except AssertionError:
        raise AssertionError(f"still alive: {sleepers(root)}") from None
