"""Cancellation: rounds of agent runs cancelled while ``sleep 30`` runs through a ``CLITool``
(a task cancelled alone, two at once, beside an MCP stdio server; an agent tool timeout; SIGINT
to a real script in a sync ``Agent.run``). Promises: after each, 0 processes of the run remain
(process groups and supervisors checked in /proc), the loop is usable and the next run works."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

from agentmaker import CLITool
from agentmaker.testing import ScriptedLLM
from common import REPO, report, scale_arg, scaled
from reliability_support import LONG, leftovers, shell_agent, silent_mcp, sleepers, wait_for_sleepers

call = ScriptedLLM.tool_call
SCRIPT = REPO / "tests" / "reliability_sigint_script.py"
BOUND = 10.0


def settle(seen) -> tuple[int, float]:
    """Waits (up to BOUND) for ``seen``'s commands and supervisors to go: (left, seconds)."""
    t0 = time.monotonic()
    while leftovers(seen) and time.monotonic() - t0 < BOUND:
        time.sleep(0.005)
    return len(leftovers(seen)), time.monotonic() - t0


async def next_run_ok() -> bool:
    result = await shell_agent([call("shell", {"command": "echo again"}), "done"]).arun("go")
    return result.final_output == "done" and "stdout:\nagain\n" in result.tool_calls[0].output


async def cancelled(n_runs: int, mcp: bool) -> tuple[int, float]:
    client = silent_mcp() if mcp else None
    tools = [CLITool(["sleep", "echo"], timeout=60)]
    if client is not None:
        await client.__aenter__()
        tools += await client.load_tools()
    script = [
        ScriptedLLM.tool_calls(("shell", {"command": LONG}), ("raw_ok", {}))
        if mcp
        else call("shell", {"command": LONG}),
        "x",
    ]
    tasks = [asyncio.create_task(shell_agent(list(script), tools=tools).arun("go")) for _ in range(n_runs)]
    seen = await asyncio.to_thread(wait_for_sleepers, n_runs)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    left, took = await asyncio.to_thread(settle, seen)
    if client is not None:
        await client.aclose()
    return left, took


async def timed_out() -> tuple[int, float]:
    t0 = time.monotonic()
    await shell_agent([call("shell", {"command": LONG}), "after"], tool_timeout=0.2).arun("go")
    while sleepers() and time.monotonic() - t0 < BOUND:
        await asyncio.sleep(0.005)
    return len(sleepers()), time.monotonic() - t0 - 0.2


def sigint() -> tuple[int, float]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])
    )
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), "agent"], stdout=subprocess.PIPE, env=env, text=True
    )
    seen = wait_for_sleepers(1, proc.pid)
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        out, _ = proc.communicate(timeout=BOUND + 30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return 1, float("inf")
    took = time.monotonic() - t0
    report_ = json.loads(out)
    left = len(report_["left"]) + len(leftovers(seen, proc.pid)) + (not report_["interrupted"])
    return left, took


def main() -> int:
    rounds = scaled(20, scale_arg(__doc__))
    worst: dict[str, float] = {}
    left_total = 0
    bad_next = 0

    def note(kind: str, outcome: tuple[int, float]) -> None:
        nonlocal left_total
        left_total += outcome[0]
        worst[kind] = max(worst.get(kind, 0.0), outcome[1])

    async def async_rounds() -> None:
        nonlocal bad_next
        for _ in range(rounds):
            note("task", await cancelled(1, False))
            note("two", await cancelled(2, False))
            note("mcp", await cancelled(1, True))
            note("timeout", await timed_out())
            bad_next += not await next_run_ok()

    asyncio.run(async_rounds())
    for _ in range(rounds):
        note("sigint", sigint())
    broken = []
    if left_total:
        broken.append(f"{left_total} processes left behind")
    if bad_next:
        broken.append(f"{bad_next} next runs failed")
    figures = {"rounds": rounds, "children_left": left_total, "next_run_failures": bad_next}
    figures |= {f"max_{k}_cleanup_ms": f"{v * 1e3:.0f}" for k, v in worst.items()}
    return report("cancellation", figures, broken)


if __name__ == "__main__":
    raise SystemExit(main())
