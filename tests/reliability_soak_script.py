"""Run by test_reliability_soak.py in a fresh process (so what earlier tests left in the heap
does not blur the figure): a warm-up, then the measured rounds of the mixed workload. Prints
one JSON line: ``{"wrong": ..., "growth_mb": ...}``. argv[1] is ``calls`` or ``agent``."""

from __future__ import annotations

import asyncio
import json
import sys

from agentmaker import Agent
from reliability_workload import (
    ASYNC_KINDS,
    LoopingLLM,
    check_run,
    mixed_registry,
    quiet_tool_errors,
    rss_mb,
    run_async,
    run_sync,
)


def calls() -> tuple[int, float]:
    """20,000 sync and 5,000 async calls after a warm-up, interleaved in four rounds."""
    reg = mixed_registry()
    # One loop for every round: a loop per round would start a new default executor each time,
    # and each new worker thread's stack and malloc arena would read as growth.
    with asyncio.Runner() as runner:
        wrong = run_sync(reg, 0, 5_000) + runner.run(run_async(reg, 0, 2_000))
        before = rss_mb()
        for k in range(4):
            wrong += run_sync(reg, 10_000 + k * 5_000, 5_000)
            wrong += runner.run(run_async(reg, 100_000 + k * 1_250, 1_250))
        return wrong, rss_mb() - before


def agent_runs() -> tuple[int, float]:
    """1,000 agent runs (800 sync, 200 async) after a warm-up."""
    reg = mixed_registry()
    agent = Agent("soak", LoopingLLM(), tool_registry=reg)
    async_agent = Agent("asoak", LoopingLLM(ASYNC_KINDS), tool_registry=reg)

    async def async_runs(start: int, count: int) -> int:
        bad = 0
        for n in range(start, start + count):
            bad += not check_run(n, await async_agent.arun(f"run {n}"), ASYNC_KINDS)
        return bad

    with asyncio.Runner() as runner:
        wrong = sum(not check_run(n, agent.run(f"run {n}")) for n in range(300))
        wrong += runner.run(async_runs(300, 100))
        before = rss_mb()
        for k in range(4):
            base = 1_000 + k * 300
            wrong += sum(not check_run(n, agent.run(f"run {n}")) for n in range(base, base + 200))
            wrong += runner.run(async_runs(base + 200, 50))
        return wrong, rss_mb() - before


if __name__ == "__main__":
    with quiet_tool_errors():
        wrong, growth = {"calls": calls, "agent": agent_runs}[sys.argv[1]]()
    print(json.dumps({"wrong": wrong, "growth_mb": growth}))
