"""A short soak: tens of thousands of mixed calls (valid, invalid arguments, unknown tool,
raising tool, large result) and a thousand agent runs get exactly their own responses and do
not grow the process's memory. benches/reliability/soak.py runs the long version."""

from __future__ import annotations

import asyncio

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

#: RSS growth allowed after warm-up. The calls allocate and free megabytes each (200 kB
#: results): a leak of even one small object per call over 25,000 calls exceeds it.
GROWTH_MB = 2.0


def test_mixed_sync_and_async_calls_are_all_right_and_memory_stays_flat():
    quiet_tool_errors()
    reg = mixed_registry()
    wrong = run_sync(reg, 0, 5_000) + asyncio.run(run_async(reg, 0, 2_000))
    assert wrong == 0
    before = rss_mb()
    for k in range(4):  # interleaved, so neither path's memory hides behind the other's
        wrong += run_sync(reg, 10_000 + k * 5_000, 5_000)
        wrong += asyncio.run(run_async(reg, 100_000 + k * 1_250, 1_250))
    growth = rss_mb() - before
    assert wrong == 0
    assert growth <= GROWTH_MB, f"RSS grew by {growth:.2f} MB over 25,000 calls"


def test_agent_runs_are_all_right_and_memory_stays_flat():
    quiet_tool_errors()
    reg = mixed_registry()
    agent = Agent("soak", LoopingLLM(), tool_registry=reg)
    async_agent = Agent("asoak", LoopingLLM(ASYNC_KINDS), tool_registry=reg)

    async def async_runs(start: int, count: int) -> int:
        results = [await async_agent.arun(f"run {n}") for n in range(start, start + count)]
        return sum(
            not check_run(n, r, ASYNC_KINDS)
            for n, r in zip(range(start, start + count), results, strict=True)
        )

    wrong = sum(not check_run(n, agent.run(f"run {n}")) for n in range(300))
    wrong += asyncio.run(async_runs(300, 100))
    before = rss_mb()
    for k in range(4):
        base = 1_000 + k * 300
        wrong += sum(not check_run(n, agent.run(f"run {n}")) for n in range(base, base + 200))
        wrong += asyncio.run(async_runs(base + 200, 50))
    growth = rss_mb() - before
    assert wrong == 0
    assert growth <= GROWTH_MB, f"RSS grew by {growth:.2f} MB over 1,000 agent runs"
