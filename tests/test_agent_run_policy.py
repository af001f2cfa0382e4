"""An Agent under a RunPolicy: the limits' validation, exact counts, the deadline and cancellation."""

from __future__ import annotations

import asyncio

import pytest
from agent_support import Add
from agentmaker import (
    Agent,
    LLMResponse,
    RunCancelled,
    RunLimitExceeded,
    RunPolicy,
)
from agentmaker.testing import ScriptedLLM

# --------------------------------------------------------------------------------- RunPolicy


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_llm_calls": 0}, "RunPolicy.max_llm_calls must be an integer >= 1 or None, got 0"),
        ({"max_tool_calls": -1}, "RunPolicy.max_tool_calls must be an integer >= 0 or None, got -1"),
        ({"max_tool_calls": True}, "RunPolicy.max_tool_calls must be an integer >= 0 or None, got True"),
        ({"max_tokens": 2.5}, "RunPolicy.max_tokens must be an integer >= 1 or None, got 2.5"),
        ({"deadline_seconds": 0}, "RunPolicy.deadline_seconds must be a positive number or None, got 0"),
        ({"deadline_seconds": "5"}, "RunPolicy.deadline_seconds must be a positive number or None, got '5'"),
        ({"cancel": 3}, "RunPolicy.cancel must be a callable or None, got 3"),
    ],
)
def test_run_policy_validation(kwargs, message):
    with pytest.raises(ValueError) as info:
        RunPolicy(**kwargs)
    assert str(info.value) == message


def test_max_tool_calls_is_exact_and_refused_calls_do_not_count():
    add = Add()
    calls = ScriptedLLM.tool_calls(
        ("nope", {}),
        ("add", {"a": "bad"}),
        ("add", {"a": 1, "b": 1}),
        ("add", {"a": 2, "b": 2}),
        ("add", {"a": 3, "b": 3}),
    )
    agent = Agent("a", ScriptedLLM([calls, "x"]), tools=[add], run_policy=RunPolicy(max_tool_calls=2))
    with pytest.raises(RunLimitExceeded, match="exceeded tool call limit 2") as info:
        agent.run("go")
    assert info.value.kind == "tool_calls"
    assert add.seen == [{"a": 1, "b": 1}, {"a": 2, "b": 2}]


def test_max_tool_calls_zero_still_allows_answers():
    agent = Agent("a", ScriptedLLM(["fine"]), tools=[Add()], run_policy=RunPolicy(max_tool_calls=0))
    assert agent.run("x").final_output == "fine"


def test_max_llm_calls_and_tokens():
    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1})] * 3)
    agent = Agent("a", llm, tools=[Add()], run_policy=RunPolicy(max_llm_calls=2))
    with pytest.raises(RunLimitExceeded, match="exceeded LLM call limit 2"):
        agent.run("x")
    assert llm.calls == 2
    heavy = LLMResponse(
        content="",
        tool_calls=ScriptedLLM.tool_call("add", {"a": 1, "b": 1}).tool_calls,
        usage={"total_tokens": 80},
    )
    llm = ScriptedLLM([heavy, heavy, "never"])
    with pytest.raises(RunLimitExceeded, match="exceeded token limit 100") as info:
        Agent("a", llm, tools=[Add()], run_policy=RunPolicy(max_tokens=100)).run("x")
    assert info.value.kind == "tokens"


def test_deadline_and_cancel():
    import time

    class Slow(Add):
        def run(self, parameters):
            time.sleep(0.05)
            return super().run(parameters)

    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1})] * 5)
    agent = Agent("a", llm, tools=[Slow()], run_policy=RunPolicy(deadline_seconds=0.08))
    with pytest.raises(RunLimitExceeded, match=r"exceeded wall-clock time limit 0.08s"):
        agent.run("x")
    flag = {"stop": False}

    class Flagging(Add):
        def run(self, parameters):
            flag["stop"] = True
            return super().run(parameters)

    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1}), "never"])
    agent = Agent("a", llm, tools=[Flagging()], run_policy=RunPolicy(cancel=lambda: flag["stop"]))
    with pytest.raises(RunCancelled, match="run was cancelled"):
        agent.run("x")
    assert llm.calls == 1


def test_policy_counts_are_per_run():
    agent = Agent(
        "a",
        ScriptedLLM(
            [
                ScriptedLLM.tool_call("add", {"a": 1, "b": 1}),
                "one",
                ScriptedLLM.tool_call("add", {"a": 1, "b": 1}),
                "two",
            ]
        ),
        tools=[Add()],
        run_policy=RunPolicy(max_tool_calls=1),
    )
    assert agent.run("x").final_output == "one"
    assert agent.run("y").final_output == "two"


@pytest.mark.parametrize("use_async", [False, True])
def test_a_deadline_bounds_tool_calls_too(use_async):
    import time

    class Hang(Add):
        def run(self, parameters):
            time.sleep(3)
            return super().run(parameters)

    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1}), "never"])
    agent = Agent("a", llm, tools=[Hang()], run_policy=RunPolicy(deadline_seconds=0.3))
    started = time.perf_counter()
    with pytest.raises(RunLimitExceeded, match="exceeded wall-clock time limit 0.3s"):
        asyncio.run(agent.arun("x")) if use_async else agent.run("x")
    assert time.perf_counter() - started < 2.0


def test_a_deadline_cuts_an_async_model_call_short():
    import time

    class SlowModel:
        async def chat(self, messages, **kwargs):
            await asyncio.sleep(3)
            return LLMResponse(content="late")

    agent = Agent("a", SlowModel(), run_policy=RunPolicy(deadline_seconds=0.2))
    started = time.perf_counter()
    with pytest.raises(RunLimitExceeded, match="exceeded wall-clock time limit 0.2s") as info:
        agent.run("x")
    assert info.value.kind == "deadline" and time.perf_counter() - started < 2.0
