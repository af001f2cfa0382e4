"""Python -> Rust crossings of one tool call through the agent (issue 20's goal: at most 3).

Counts every call into an ``agentmaker._native`` function or method made while a run handles
one tool call, minus a run that answers without one. The counter lives in
tests/native_calls.py, which the test suite uses to hold the same figures.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import agentmaker.agent.tool_calls as executor
from agentmaker import Agent, tool
from agentmaker.agent.worker_threads import ToolThreads
from agentmaker.testing import ScriptedLLM
from native_calls import native_calls

GOAL = 3


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
async def add_later(a: int, b: int) -> int:
    """Add two numbers, asynchronously."""
    return a + b


def crossings(t, awaited: bool) -> tuple[int, dict[str, int]]:
    def run(script: list) -> dict[str, int]:
        # A fresh worker pool, so the worker a sync call runs on starts while the count runs.
        fresh = ToolThreads(max_workers=1)
        executor.shared_threads = lambda: fresh  # type: ignore[assignment]
        agent = Agent("a", ScriptedLLM(script), tools=[t])
        if awaited:
            return dict(native_calls(lambda: asyncio.run(agent.arun("go"))))
        return dict(native_calls(lambda: agent.run("go")))

    base = run(["done"])
    one = run([ScriptedLLM.tool_call(t.name, {"a": 1, "b": 2}), "done"])
    extra = {k: v - base.get(k, 0) for k, v in one.items() if v != base.get(k, 0)}
    return sum(extra.values()), extra


def main() -> None:
    for label, t, awaited in (
        ("sync tool, Agent.run", add, False),
        ("sync tool, Agent.arun", add, True),
        ("async tool, Agent.arun", add_later, True),
    ):
        n, detail = crossings(t, awaited)
        verdict = "ok" if n <= GOAL else "OVER"
        print(f"crossings  {label:<58} {n:>3}  goal {GOAL} [{verdict}]  {detail}", flush=True)


if __name__ == "__main__":
    main()
