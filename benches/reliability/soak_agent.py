"""Soak: 20,000 scripted agent runs (sync and async), each calling every kind of the mixed
workload once. Promises: every run ends right with each call's own status, 0 unexpected
exceptions, RSS growth after warm-up <= 2 MB."""

from __future__ import annotations

import asyncio
import time

from agentmaker import Agent
from common import report, scale_arg, scaled, soak_broken
from reliability_workload import ASYNC_KINDS, LoopingLLM, check_run, mixed_registry, quiet_tool_errors, rss_mb

RSS_LIMIT_MB = 2.0


def main() -> int:
    scale = scale_arg(__doc__)
    runs = scaled(20_000, scale)
    reg = mixed_registry()
    sync_agent = Agent("soak", LoopingLLM(), tool_registry=reg)
    async_agent = Agent("asoak", LoopingLLM(ASYNC_KINDS), tool_registry=reg)
    stats = {"wrong": 0, "exceptions": 0, "max": 0.0}

    def one_sync(n: int) -> None:
        t0 = time.perf_counter()
        try:
            ok = check_run(n, sync_agent.run(f"run {n}"))
        except Exception:  # noqa: BLE001 - counted
            stats["exceptions"] += 1
            return
        stats["max"] = max(stats["max"], time.perf_counter() - t0)
        stats["wrong"] += not ok

    async def some_async(start: int, count: int) -> None:
        for n in range(start, start + count):
            t0 = time.perf_counter()
            try:
                ok = check_run(n, await async_agent.arun(f"run {n}"), ASYNC_KINDS)
            except Exception:  # noqa: BLE001 - counted
                stats["exceptions"] += 1
                continue
            stats["max"] = max(stats["max"], time.perf_counter() - t0)
            stats["wrong"] += not ok

    for n in range(500):  # warm-up
        one_sync(n)
    asyncio.run(some_async(500, 200))
    before = rss_mb()
    t0 = time.perf_counter()
    half = runs // 2
    for n in range(1_000, 1_000 + half):
        one_sync(n)
    asyncio.run(some_async(1_000 + half, runs - half))
    elapsed = time.perf_counter() - t0
    growth = rss_mb() - before
    broken = soak_broken(stats, growth, RSS_LIMIT_MB, "runs")
    figures = {
        "runs": runs,
        "runs_per_s": f"{runs / elapsed:.0f}",
        "max_run_ms": f"{stats['max'] * 1e3:.1f}",
        "rss_before_mb": f"{before:.1f}",
        "rss_growth_mb": f"{growth:+.2f}",
        "wrong": stats["wrong"],
        "exceptions": stats["exceptions"],
    }
    return report("soak_agent", figures, broken)


if __name__ == "__main__":
    with quiet_tool_errors():
        raise SystemExit(main())
