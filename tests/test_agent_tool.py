"""``Agent.as_tool``: a sub-agent as a tool, inside the calling run (deadline, cancellation,
usage, transcript, confirmation, depth)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from agent_support import ENTRY_POINTS, run_by
from agentmaker import (
    Agent,
    AgentTool,
    LLMResponse,
    RunCancelled,
    RunContext,
    RunLimitExceeded,
    RunPolicy,
    RunResult,
    ToolConfigError,
    ToolRegistry,
    tool,
)
from agentmaker.testing import ScriptedLLM


def delegate(task: str, call_id: str = "s1") -> LLMResponse:
    return ScriptedLLM.tool_call("researcher", {"input": task}, call_id=call_id)


def usage(total: int) -> dict[str, int]:
    return {"prompt_tokens": total - 1, "completion_tokens": 1, "total_tokens": total}


@tool
def lookup(city: str) -> str:
    """Look a city up.

    Args:
        city: The city.
    """
    return f"{city}: 12 degrees"


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_answer_is_the_result_and_the_transcript_is_in_the_record(how: str) -> None:
    sub_llm = ScriptedLLM([ScriptedLLM.tool_call("lookup", {"city": "Oslo"}), "Oslo is at 12 degrees"])
    sub = Agent("researcher", sub_llm, tools=[lookup], instructions="You research.")
    parent_llm = ScriptedLLM([delegate("Weather in Oslo?"), "It is 12 degrees in Oslo."])
    result = run_by(Agent("lead", parent_llm, tools=[sub.as_tool()]), how)
    assert result.final_output == "It is 12 degrees in Oslo."
    rec = result.tool_calls[0]
    assert (rec.name, rec.status, rec.output) == ("researcher", "success", "Oslo is at 12 degrees")
    sub_run = rec.data
    assert isinstance(sub_run, RunResult) and sub_run.status == "completed"
    assert [r.name for r in sub_run.tool_calls] == ["lookup"]
    # The sub-agent saw its own instructions and the task only, not the caller's conversation.
    first = sub_llm.requests[0].messages
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0]["content"] == "You research." and first[1]["content"] == "Weather in Oslo?"
    assert result.usage.llm_calls == 4  # two of the caller's, two of the sub-agent's
    assert result.usage.tool_calls == 2  # the delegation and the sub-agent's lookup


def test_usage_and_the_transcript_survive_json() -> None:
    sub_llm = ScriptedLLM([LLMResponse(content="done", model="t", usage=usage(30))])
    sub = Agent("researcher", sub_llm)
    parent_llm = ScriptedLLM(
        [
            LLMResponse(content="", model="t", tool_calls=delegate("x").tool_calls, usage=usage(10)),
            LLMResponse(content="ok", model="t", usage=usage(5)),
        ]
    )
    result = Agent("lead", parent_llm, tools=[sub.as_tool()]).run("go")
    assert (result.usage.llm_calls, result.usage.total_tokens, result.usage.prompt_tokens) == (3, 45, 42)
    again = RunResult.from_json(result.to_json())
    assert isinstance(again.tool_calls[0].data, RunResult)
    assert again.tool_calls[0].data.messages == result.tool_calls[0].data.messages
    assert again.usage == result.usage


def test_an_agent_given_itself_stops_at_the_depth_limit() -> None:
    llm = ScriptedLLM([delegate("again", f"c{i}") for i in range(4)] + [f"answer {i}" for i in range(4)])
    agent = Agent("researcher", llm)
    agent.tool_registry = ToolRegistry()
    agent.tool_registry.register(agent.as_tool())
    result = agent.run("go")
    # Depths 1, 2 and 3 ran; the fourth call was refused before a fourth agent started.
    innermost = result.tool_calls[0].data.tool_calls[0].data.tool_calls[0].data
    refused = innermost.tool_calls[0]
    assert refused.status == "error"
    assert refused.output == (
        "Error: researcher was not started: agents are already nested 3 deep here, the most "
        "allowed (max_depth=3). Do this part yourself."
    )
    assert refused.data is None
    assert llm.calls == 8
    shallow = Agent("researcher", ScriptedLLM([delegate("x"), delegate("y", "c2"), "inner", "outer"]))
    shallow.tool_registry = ToolRegistry()
    shallow.tool_registry.register(shallow.as_tool(max_depth=1))
    nested = shallow.run("go").tool_calls[0].data.tool_calls[0]
    assert "max_depth=1" in nested.output


def test_the_sub_agent_stops_at_the_callers_deadline() -> None:
    stopped = threading.Event()

    @tool
    async def slow() -> str:
        """Take a long time."""
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()
        return "late"

    sub = Agent("researcher", ScriptedLLM([ScriptedLLM.tool_call("slow", {}), "never"]), tools=[slow])
    parent = Agent(
        "lead",
        ScriptedLLM([delegate("x"), "never"]),
        tools=[sub.as_tool()],
        run_policy=RunPolicy(deadline_seconds=0.3),
    )
    with pytest.raises(RunLimitExceeded) as info:
        parent.run("go")
    assert info.value.kind == "deadline"
    assert stopped.is_set()  # the sub-agent's tool was stopped, not abandoned
    assert info.value.result.tool_calls[0].status in ("timeout", "error")


def test_cancelling_the_caller_cancels_the_sub_agent() -> None:
    started = asyncio.Event()
    cancelled = threading.Event()

    @tool
    async def wait_forever() -> str:
        """Wait."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    sub = Agent("researcher", ScriptedLLM([ScriptedLLM.tool_call("wait_forever", {})]), tools=[wait_forever])
    parent = Agent("lead", ScriptedLLM([delegate("x")]), tools=[sub.as_tool()])

    async def main() -> None:
        task = asyncio.create_task(parent.arun("go"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled.is_set()


def test_the_callers_cancel_callback_and_caps_hold_inside() -> None:
    flag = {"stop": False}

    @tool
    def trip() -> str:
        """Ask to stop."""
        flag["stop"] = True
        return "tripped"

    sub = Agent("researcher", ScriptedLLM([ScriptedLLM.tool_call("trip", {}), "never"]), tools=[trip])
    parent = Agent(
        "lead",
        ScriptedLLM([delegate("x"), "never"]),
        tools=[sub.as_tool()],
        run_policy=RunPolicy(cancel=lambda: flag["stop"]),
    )
    with pytest.raises(RunCancelled):
        parent.run("go")
    # The caller's cap on model calls counts the sub-agent's calls too.
    sub = Agent("researcher", ScriptedLLM(["one", "two"]))
    capped = Agent(
        "lead",
        ScriptedLLM([delegate("x"), delegate("y", "s2"), "never"]),
        tools=[sub.as_tool()],
        run_policy=RunPolicy(max_llm_calls=3),
    )
    with pytest.raises(RunLimitExceeded) as info:
        capped.run("go")
    assert info.value.kind == "llm_calls"
    assert info.value.result.usage.llm_calls == 3  # the caller's two and the first sub-agent's
    refused = info.value.result.tool_calls[1]
    assert refused.output == (
        "Error: the agent researcher failed: RunLimitExceeded: exceeded LLM call limit 3"
    )


def test_confirmation_goes_to_the_callers_confirm() -> None:
    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        return f"deleted {path}"

    asked: list[tuple[str, dict]] = []

    def confirm(t: object, params: dict) -> bool:
        asked.append((t.name, params))  # type: ignore[attr-defined]
        return True

    def sub() -> Agent:
        llm = ScriptedLLM([ScriptedLLM.tool_call("delete_file", {"path": "a.txt"}), "removed"])
        return Agent("researcher", llm, tools=[delete_file])

    result = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[sub().as_tool()], confirm=confirm).run(
        "go"
    )
    assert asked == [("delete_file", {"path": "a.txt"})]
    assert result.tool_calls[0].data.tool_calls[0].status == "success"
    # Nobody to ask above: refused as it would be at the top.
    result = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[sub().as_tool()]).run("go")
    assert result.tool_calls[0].data.tool_calls[0].status == "not_confirmed"
    # A sub-agent's own confirm wins.
    own = sub()
    own.confirm = lambda t, p: False
    result = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[own.as_tool()], confirm=confirm).run(
        "go"
    )
    assert len(asked) == 1 and result.tool_calls[0].data.tool_calls[0].status == "not_confirmed"


def test_a_failing_sub_agent_is_an_error_result_and_the_caller_goes_on() -> None:
    sub = Agent("researcher", ScriptedLLM([ConnectionError("model is down")]))
    result = Agent("lead", ScriptedLLM([delegate("x"), "I will do it myself"]), tools=[sub.as_tool()]).run(
        "go"
    )
    rec = result.tool_calls[0]
    assert rec.status == "error"
    assert rec.output == "Error: the agent researcher failed: ConnectionError: model is down"
    assert isinstance(rec.data, RunResult) and rec.data.status == "failed"
    assert result.final_output == "I will do it myself"
    # Its own turn limit makes a partial result.
    looping = Agent(
        "researcher",
        ScriptedLLM([ScriptedLLM.tool_call("lookup", {"city": "x"})]),
        tools=[lookup],
        max_turns=1,
    )
    result = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[looping.as_tool()]).run("go")
    assert result.tool_calls[0].status == "partial"
    assert result.tool_calls[0].data.status == "max_turns"


def test_deps_reach_the_sub_agents_tools() -> None:
    @tool
    def whoami(ctx: RunContext[str]) -> str:
        """Say who the user is."""
        return f"user {ctx.deps} at depth run {ctx.agent}"

    sub = Agent("researcher", ScriptedLLM([ScriptedLLM.tool_call("whoami", {}), "done"]), tools=[whoami])
    result = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[sub.as_tool()]).run("go", deps="ada")
    assert result.tool_calls[0].data.tool_calls[0].output == "user ada at depth run researcher"


def test_outside_an_agent_the_sub_agent_runs_by_itself() -> None:
    sub = Agent("researcher", ScriptedLLM(["answer one", "answer two"]))
    reg = ToolRegistry()
    reg.register(sub.as_tool(name="ask_researcher", description="Ask the researcher."))
    out = reg.execute_tool("ask_researcher", {"input": "q"})
    assert (out.status, out.text) == ("success", "answer one")
    assert isinstance(out.data, RunResult)
    out = asyncio.run(reg.aexecute_tool("ask_researcher", {"input": "q"}))
    assert out.text == "answer two"
    schema = reg.to_openai_schema()[0]["function"]
    assert schema["name"] == "ask_researcher" and schema["description"] == "Ask the researcher."
    assert schema["parameters"]["required"] == ["input"]


def test_bad_settings_are_refused() -> None:
    sub = Agent("researcher", ScriptedLLM([]))
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ToolConfigError, match="max_depth"):
            sub.as_tool(max_depth=bad)  # type: ignore[arg-type]
    with pytest.raises(ToolConfigError, match="description"):
        sub.as_tool(description="  ")
    with pytest.raises(ToolConfigError):
        sub.as_tool(prompts={"tool.desc.agnet": "x"})
    made = sub.as_tool()
    assert isinstance(made, AgentTool) and made.name == "researcher"
    assert made.description.startswith("Hand a task to the agent researcher")
