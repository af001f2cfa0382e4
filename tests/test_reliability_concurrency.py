"""Concurrency: a thousand calls at once in one loop, concurrent agent runs, and threads calling
while another registers and unregisters tools. Every result must be the one of its own call;
a watchdog fails the test instead of hanging when something deadlocks.
benches/reliability/concurrency.py runs the long version."""

from __future__ import annotations

import asyncio
import threading

import pytest
from agentmaker import Agent, ToolRegistry
from reliability_workload import (
    ASYNC_KINDS,
    Churn,
    LoopingLLM,
    check_run,
    mixed_registry,
    quiet_tool_errors,
    run_async,
    watched,
)

#: A deadlock fails the test after this long (the work takes a few seconds).
WATCHDOG = 60.0


@pytest.fixture(autouse=True, scope="module")
def _quiet_tool_errors():
    with quiet_tool_errors():
        yield


async def test_a_thousand_concurrent_async_calls_in_one_loop():
    assert await run_async(mixed_registry(), 0, 1_000, width=1_000) == 0


async def test_two_hundred_concurrent_agent_runs():
    agent = Agent("many", LoopingLLM(ASYNC_KINDS), tool_registry=mixed_registry())
    results = await asyncio.gather(*(agent.arun(f"run {n}") for n in range(200)))
    assert [n for n, r in enumerate(results) if not check_run(n, r, ASYNC_KINDS)] == []


def test_threads_calling_while_tools_are_registered_and_unregistered():
    reg = mixed_registry()
    churn = Churn(reg)
    changer = threading.Thread(target=churn.mutator, name="mutator", daemon=True)
    changer.start()
    callers = [
        threading.Thread(target=churn.caller, args=(t, 1_500), name=f"caller-{t}", daemon=True)
        for t in range(8)
    ]
    try:
        assert watched(callers, WATCHDOG) == [], "deadlock"
    finally:
        churn.done.set()
    assert watched([changer], WATCHDOG) == [], "deadlock"
    assert churn.errors == []
    assert churn.wrong == []
    assert churn.mutations > 10  # the registry really changed while the calls ran
    assert sorted(reg.names()) == sorted(mixed_registry().names())


def test_concurrent_registration_of_the_same_name_keeps_one_tool():
    reg = ToolRegistry()
    outcomes: list[str] = []

    def register(t: int) -> None:
        def same(n: int) -> str:
            """Same name from every thread."""
            return f"{t}:{n}"

        try:
            reg.register_callable(same, name="same")
            outcomes.append("registered")
        except Exception as exc:  # noqa: BLE001 - the losers get a registration error
            outcomes.append(type(exc).__name__)

    threads = [threading.Thread(target=register, args=(t,), daemon=True) for t in range(8)]
    assert watched(threads, WATCHDOG) == [], "deadlock"
    # The losers get a ToolRegistrationError: its subclass for a taken name.
    assert sorted(outcomes) == sorted(["registered"] + ["DuplicateToolError"] * 7)
    assert reg.execute_tool("same", {"n": 1}).status == "success"
