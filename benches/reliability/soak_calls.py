"""Soak: 1,000,000 sync and 200,000 async ``execute_tool`` calls of the mixed workload (valid,
invalid arguments, unknown tool, raising tool, 200 kB result, calculator, async tool).
Promises: 0 wrong results, 0 unexpected exceptions, RSS growth after warm-up <= 1 MB."""

from __future__ import annotations

import asyncio
import time

from common import report, scale_arg, scaled, soak_broken
from reliability_workload import (
    ASYNC_KINDS,
    call_for,
    check,
    mixed_registry,
    quiet_tool_errors,
    rss_mb,
)

RSS_LIMIT_MB = 1.0


def sync_calls(reg, start: int, count: int, stats: dict) -> None:
    clock = time.perf_counter
    for i in range(start, start + count):
        kind, name, args = call_for(i)
        t0 = clock()
        try:
            resp = reg.execute_tool(name, args)
        except Exception:  # noqa: BLE001 - counted: execute_tool must not raise
            stats["exceptions"] += 1
            continue
        stats["max_sync"] = max(stats["max_sync"], clock() - t0)
        stats["wrong"] += not check(i, kind, resp)


async def async_calls(reg, start: int, count: int, stats: dict, width: int = 100) -> None:
    clock = time.perf_counter

    async def one(i: int) -> None:
        kind, name, args = call_for(i, ASYNC_KINDS)
        t0 = clock()
        try:
            resp = await reg.aexecute_tool(name, args)
        except Exception:  # noqa: BLE001 - counted
            stats["exceptions"] += 1
            return
        stats["max_async"] = max(stats["max_async"], clock() - t0)
        stats["wrong"] += not check(i, kind, resp)

    for base in range(start, start + count, width):
        await asyncio.gather(*(one(i) for i in range(base, min(base + width, start + count))))


def main() -> int:
    scale = scale_arg(__doc__)
    n_sync, n_async = scaled(1_000_000, scale), scaled(200_000, scale)
    reg = mixed_registry()
    stats = {"wrong": 0, "exceptions": 0, "max_sync": 0.0, "max_async": 0.0}
    sync_calls(reg, 0, 20_000, stats)  # warm-up: caches, allocator arenas, the thread pool
    asyncio.run(async_calls(reg, 0, 5_000, stats))
    before = rss_mb()
    t0 = time.perf_counter()
    sync_calls(reg, 100_000, n_sync, stats)
    sync_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    asyncio.run(async_calls(reg, 10_000_000, n_async, stats))
    async_s = time.perf_counter() - t0
    growth = rss_mb() - before
    broken = soak_broken(stats, growth, RSS_LIMIT_MB, "results")
    figures = {
        "sync_calls": n_sync,
        "sync_per_s": f"{n_sync / sync_s:.0f}",
        "sync_max_ms": f"{stats['max_sync'] * 1e3:.1f}",
        "async_calls": n_async,
        "async_per_s": f"{n_async / async_s:.0f}",
        "async_max_ms": f"{stats['max_async'] * 1e3:.1f}",
        "rss_before_mb": f"{before:.1f}",
        "rss_growth_mb": f"{growth:+.2f}",
        "wrong": stats["wrong"],
        "exceptions": stats["exceptions"],
    }
    return report("soak_calls", figures, broken)


if __name__ == "__main__":
    with quiet_tool_errors():
        raise SystemExit(main())
