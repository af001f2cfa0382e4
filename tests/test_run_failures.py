"""Failures keep the work done: .result on the exception that ends a run; RetryAgentRun capped."""

from __future__ import annotations

import asyncio

import pytest
from agentmaker import Agent, LLMResponseError, RetryAgentRun, RunLimitExceeded, RunPolicy, tool
from agentmaker.testing import ScriptedLLM
from test_history import add


@pytest.mark.parametrize("use_async", [False, True])
def test_a_model_error_carries_the_transcript_and_usage(use_async):
    first = ScriptedLLM.tool_call("add", {"a": 2, "b": 5})
    first.usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    llm = ScriptedLLM([first, LLMResponseError("HTTP 503 from the endpoint", status=503)])
    agent = Agent("a", llm, tools=[add])
    with pytest.raises(LLMResponseError, match="HTTP 503") as info:
        if use_async:
            asyncio.run(agent.arun("add"))
        else:
            agent.run("add")
    partial = info.value.result
    assert partial.status == "failed"
    assert partial.final_output == ""
    assert [m["role"] for m in partial.new_messages()] == ["user", "assistant", "tool"]
    assert partial.messages[-1]["content"] == "7"
    assert partial.usage.llm_calls == 1
    assert partial.usage.tool_calls == 1
    assert partial.usage.total_tokens == 12
    assert [r.status for r in partial.tool_calls] == ["success"]


def test_a_run_limit_carries_the_partial_result():
    llm = ScriptedLLM([ScriptedLLM.tool_call("add", {"a": 1, "b": 1}), "never"])
    agent = Agent("a", llm, tools=[add], run_policy=RunPolicy(max_llm_calls=1))
    with pytest.raises(RunLimitExceeded) as info:
        agent.run("add")
    assert info.value.kind == "llm_calls"
    assert info.value.result.tool_calls[0].output == "2"
    assert info.value.result.usage.llm_calls == 1


def retrying_agent(times, policy=None):
    attempts = []

    @tool
    def fetch(page: int) -> str:
        """Fetch a page.

        Args:
            page: Which page.
        """
        attempts.append(page)
        raise RetryAgentRun(f"page {page} is not ready; ask for page {page + 1}")

    script = [ScriptedLLM.tool_call("fetch", {"page": i}, call_id=f"c{i}") for i in range(times)]
    llm = ScriptedLLM([*script, "gave up"])
    return Agent("a", llm, tools=[fetch], run_policy=policy), attempts


def test_retries_are_capped_at_three_by_default_with_a_clear_error():
    agent, attempts = retrying_agent(4)
    with pytest.raises(RunLimitExceeded) as info:
        agent.run("fetch")
    assert info.value.kind == "retries"
    assert str(info.value) == (
        "the model was asked to try again 4 times in this run, more than "
        "RunPolicy(max_retries=3) allows; the last request was: page 3 is not ready; ask for page 4"
    )
    assert attempts == [0, 1, 2, 3]
    assert [r.status for r in info.value.result.tool_calls] == ["retry"] * 4


def test_retries_within_the_cap_let_the_run_finish():
    agent, attempts = retrying_agent(3)
    assert agent.run("fetch").final_output == "gave up"
    assert attempts == [0, 1, 2]


def test_max_retries_is_set_by_the_run_policy():
    agent, attempts = retrying_agent(1, RunPolicy(max_retries=0))
    with pytest.raises(
        RunLimitExceeded, match=r"try again 1 times in this run, more than RunPolicy\(max_retries=0\)"
    ):
        agent.run("fetch")
    assert attempts == [0]
    agent, _ = retrying_agent(5, RunPolicy(max_retries=5))
    assert agent.run("fetch").final_output == "gave up"


@pytest.mark.parametrize("bad", [-1, True, 2.0, None])
def test_max_retries_must_be_a_count(bad):
    with pytest.raises(ValueError, match="RunPolicy.max_retries must be an integer >= 0"):
        RunPolicy(max_retries=bad)
