"""Concurrency: a thousand calls at once in one loop, concurrent agent runs, and threads calling
while another registers and unregisters tools. Every result must be the one of its own call;
a watchdog fails the test instead of hanging when something deadlocks.
benches/reliability/concurrency.py runs the long version."""

from __future__ import annotations

import asyncio
import faulthandler
import sys
import threading

from agentmaker import Agent, ToolRegistry
from reliability_workload import (
    ASYNC_KINDS,
    LoopingLLM,
    call_for,
    check,
    check_run,
    mixed_registry,
    quiet_tool_errors,
    run_async,
)

#: A deadlock fails the test after this long (the work takes a few seconds).
WATCHDOG = 60.0


async def test_a_thousand_concurrent_async_calls_in_one_loop():
    quiet_tool_errors()
    assert await run_async(mixed_registry(), 0, 1_000, width=1_000) == 0


async def test_two_hundred_concurrent_agent_runs():
    quiet_tool_errors()
    agent = Agent("many", LoopingLLM(ASYNC_KINDS), tool_registry=mixed_registry())
    results = await asyncio.gather(*(agent.arun(f"run {n}") for n in range(200)))
    assert [n for n, r in enumerate(results) if not check_run(n, r, ASYNC_KINDS)] == []


def temp_tool_response_is_right(k: int, resp) -> bool:
    """A call to ``tmp<k>`` while it may or may not be registered."""
    if resp.status == "success":
        return resp.text == f"tmp{k}:{k}"
    return resp.text.startswith(f"Error: tool 'tmp{k}' does not exist.")


def watched(threads: list[threading.Thread]) -> None:
    """Joins ``threads``; on a deadlock dumps every thread's stack and fails."""
    for t in threads:
        t.start()
    for t in threads:
        t.join(WATCHDOG)
        if t.is_alive():
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            raise AssertionError(f"deadlock: {t.name} still running after {WATCHDOG:g} s")


def test_threads_calling_while_tools_are_registered_and_unregistered():
    quiet_tool_errors()
    reg = mixed_registry()
    done = threading.Event()
    wrong: list[str] = []
    errors: list[BaseException] = []
    mutations = [0]

    def caller(t: int) -> None:
        try:
            for j in range(1_500):
                i = t * 100_000 + j
                kind, name, args = call_for(i)
                if not check(i, kind, reg.execute_tool(name, args)):
                    wrong.append(f"call {i} ({kind})")
                k = mutations[0]
                if not temp_tool_response_is_right(k, reg.execute_tool(f"tmp{k}", {"n": k})):
                    wrong.append(f"tmp{k}")
                if j % 100 == 0:
                    reg.to_openai_schema()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    def mutator() -> None:
        try:
            k = 0
            while not done.is_set():
                k += 1

                def temp(n: int, k: int = k) -> str:
                    """A tool that lives for a moment."""
                    return f"tmp{k}:{n}"

                reg.register_callable(temp, name=f"tmp{k}")
                mutations[0] = k
                if k % 2:
                    reg.unregister(f"tmp{k}")
                reg.register_callable(temp, name=f"tmp{k}", overwrite=True)
                reg.unregister(f"tmp{k}")
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    callers = [threading.Thread(target=caller, args=(t,), name=f"caller-{t}", daemon=True) for t in range(8)]
    changer = threading.Thread(target=mutator, name="mutator", daemon=True)
    changer.start()
    try:
        watched(callers)
    finally:
        done.set()
    watched_join(changer)
    assert errors == []
    assert wrong == []
    assert mutations[0] > 10  # the registry really changed while the calls ran
    assert sorted(reg.names()) == sorted(mixed_registry().names())


def watched_join(t: threading.Thread) -> None:
    t.join(WATCHDOG)
    assert not t.is_alive(), f"deadlock: {t.name} still running"


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
    watched(threads)
    assert sorted(outcomes) == sorted(["registered"] + ["ToolRegistrationError"] * 7)
    assert reg.execute_tool("same", {"n": 1}).status == "success"
