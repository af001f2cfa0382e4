"""Isolated tools (issue 25): the round trip of a trivial call to a warm worker, against the
standard library's process pools doing the same work (goal: at most 1 ms, and below both)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing

from agentmaker import ToolRegistry, tool
from harness import async_per_call_us, per_call_us, report

GROUP = "isolation"
GOAL_US = 1000.0


def add_numbers(a: int, b: int) -> int:
    return a + b


@tool(isolate=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def main() -> None:
    reg = ToolRegistry()
    reg.register(add)
    args = {"a": 1, "b": 2}
    assert reg.execute_tool("add", args).text == "3"
    ours = per_call_us(lambda: reg.execute_tool("add", args), number=500, repeat=5)
    ours_async = async_per_call_us(lambda: reg.aexecute_tool("add", args), number=500, repeat=5)
    ctx = multiprocessing.get_context("forkserver")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=ctx) as ex:
        ex.submit(add_numbers, 1, 2).result()
        executor = per_call_us(lambda: ex.submit(add_numbers, 1, 2).result(), number=500, repeat=5)
    with ctx.Pool(1) as pool:
        pool.apply(add_numbers, (1, 2))
        apply = per_call_us(lambda: pool.apply(add_numbers, (1, 2)), number=500, repeat=5)
    floor = min(executor, apply)
    note = f"ProcessPoolExecutor {executor:.1f} µs, multiprocessing.Pool.apply {apply:.1f} µs"
    report(GROUP, "isolated @tool call, warm worker, execute_tool", ours, target_us=GOAL_US, note=note)
    report(GROUP, "isolated @tool call, warm worker, await aexecute_tool", ours_async, target_us=GOAL_US)
    verdict = "ok" if ours < floor else "OVER"
    print(f"{GROUP:<10} {'below both standard pools':<58} [{verdict}]", flush=True)


if __name__ == "__main__":
    asyncio.run(asyncio.sleep(0))
    main()
