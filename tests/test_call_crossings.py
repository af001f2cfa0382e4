"""How often one tool call enters the Rust core: once per response to prepare its calls, and
once to run a call (or, for an awaited call, once to start it and once to finish it)."""

from __future__ import annotations

import asyncio

from agentmaker import Agent, tool
from agentmaker.testing import ScriptedLLM
from native_calls import native_calls


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
async def add_later(a: int, b: int) -> int:
    """Add two numbers, asynchronously."""
    await asyncio.sleep(0)
    return a + b


def call(name: str) -> list:
    return [ScriptedLLM.tool_call(name, {"a": 1, "b": 2}), "done"]


def test_a_sync_call_enters_the_core_twice():
    agent = Agent("a", ScriptedLLM(call("add")), tools=[add])
    result = None

    def go():
        nonlocal result
        result = agent.run("add")

    seen = native_calls(go)
    assert result.tool_calls[0].output == "3"
    assert seen == {"ToolRegistry.to_openai_schema": 1, "CallPipeline.prepare": 1, "CallPipeline.run": 1}


def test_an_awaited_call_enters_the_core_three_times():
    agent = Agent("a", ScriptedLLM(call("add_later")), tools=[add_later])
    result = None

    def go():
        nonlocal result
        result = asyncio.run(agent.arun("add"))

    seen = native_calls(go)
    assert result.tool_calls[0].output == "3"
    # The function is called and its value converted by the core: no crossing of its own.
    assert seen == {
        "ToolRegistry.to_openai_schema": 1,
        "CallPipeline.prepare": 1,
        "CallPipeline.start": 1,
        "StartedCall.finish": 1,
    }


def test_a_sync_call_on_a_worker_thread_enters_the_core_twice(monkeypatch):
    # A fresh pool: its worker starts while the count runs, so its calls are seen too.
    import agentmaker.agent.tool_calls as executor
    from agentmaker.agent.worker_threads import ToolThreads

    fresh = ToolThreads(max_workers=1)
    monkeypatch.setattr(executor, "shared_threads", lambda: fresh)
    agent = Agent("a", ScriptedLLM(call("add")), tools=[add])
    seen = native_calls(lambda: asyncio.run(agent.arun("add")))
    assert seen["CallPipeline.prepare"] == 1 and seen["CallPipeline.run"] == 1


def test_one_response_is_prepared_in_one_crossing_however_many_calls_it_makes():
    calls = ScriptedLLM.tool_calls(*[("add", {"a": i, "b": 1}) for i in range(5)], ("nope", {}))
    agent = Agent("a", ScriptedLLM([calls, "done"]), tools=[add])
    seen = native_calls(lambda: agent.run("go"))
    assert seen["CallPipeline.prepare"] == 1
    assert seen["CallPipeline.run"] == 5  # the unknown tool is refused inside prepare
