"""Concurrency: rounds of 1,000 concurrent async calls in one loop, then 8 threads calling for
30 s while another registers, overwrites and unregisters tools. Promises: 0 errors, 0 wrong
results (every result is its own call's), no deadlock (a watchdog fails the run)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

from common import report, scale_arg, scaled
from reliability_workload import Churn, mixed_registry, quiet_tool_errors, run_async, watched

WATCHDOG_GRACE = 60.0


def main() -> int:
    scale = scale_arg(__doc__)
    rounds, seconds = scaled(50, scale), 30.0 * scale
    reg = mixed_registry()

    async def gathers() -> tuple[int, float]:
        wrong, worst = 0, 0.0
        for r in range(rounds):
            t0 = time.perf_counter()
            wrong += await run_async(reg, r * 1_000, 1_000, width=1_000)
            worst = max(worst, time.perf_counter() - t0)
        return wrong, worst

    t0 = time.perf_counter()
    wrong_async, worst = asyncio.run(gathers())
    async_s = time.perf_counter() - t0

    churn = Churn(reg)
    changer = threading.Thread(target=churn.mutator, name="mutator", daemon=True)
    callers = [
        threading.Thread(target=churn.caller, args=(t, None), name=f"caller-{t}", daemon=True)
        for t in range(8)
    ]
    for t in [changer, *callers]:
        t.start()
    time.sleep(seconds)
    churn.done.set()
    stuck = watched([*callers, changer], WATCHDOG_GRACE)
    broken = []
    if wrong_async:
        broken.append(f"{wrong_async} wrong async results")
    if churn.wrong:
        broken.append(f"{len(churn.wrong)} wrong threaded results, first: {churn.wrong[0]}")
    if churn.errors:
        broken.append(f"{len(churn.errors)} errors, first: {churn.errors[0]!r}")
    if stuck:
        broken.append(f"deadlock: {', '.join(stuck)} still running")
    figures = {
        "gathers": f"{rounds}x1000",
        "async_per_s": f"{rounds * 1_000 / async_s:.0f}",
        "max_gather_ms": f"{worst * 1e3:.0f}",
        "thread_seconds": f"{seconds:g}",
        "threaded_calls": churn.calls,
        "registry_changes": churn.mutations,
        "wrong": wrong_async + len(churn.wrong),
        "errors": len(churn.errors),
        "deadlocks": len(stuck),
    }
    status = report("concurrency", figures, broken)
    if stuck:
        os._exit(status)  # the stuck daemon threads must not hold the interpreter's exit
    return status


if __name__ == "__main__":
    with quiet_tool_errors():
        raise SystemExit(main())
