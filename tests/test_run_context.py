"""RunContext: a tool parameter the agent fills with the calling run's context."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from agentmaker import Agent, RunContext, ToolRegistry, tool
from agentmaker.testing import ScriptedLLM


@dataclass
class Deps:
    user: str


SEEN: list[tuple] = []


@tool
def greet(ctx: RunContext[Deps], greeting: str) -> str:
    """Greet the current user.

    Args:
        ctx: The run (not shown to the model).
        greeting: The word to greet with.
    """
    SEEN.append((ctx.run_id, ctx.agent, ctx.turn, ctx.usage.llm_calls, len(ctx.messages)))
    return f"{greeting}, {ctx.deps.user}"


@tool
async def agreet(greeting: str, context: RunContext) -> str:
    """Greet asynchronously.

    Args:
        greeting: The word to greet with.
    """
    await asyncio.sleep(0)
    return f"{greeting}, {context.deps.user} (async)"


@pytest.fixture(autouse=True)
def _clean():
    SEEN.clear()


def test_the_context_parameter_is_not_in_the_schema():
    assert greet.get_input_schema() == {
        "type": "object",
        "properties": {"greeting": {"type": "string", "description": "The word to greet with."}},
        "required": ["greeting"],
    }
    assert [p.name for p in agreet.get_parameters()] == ["greeting"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_receives_the_runs_deps_id_usage_and_messages(use_async):
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_calls(("greet", {"greeting": "Hi"}), ("agreet", {"greeting": "Yo"})),
            ScriptedLLM.tool_call("greet", {"greeting": "Bye"}, call_id="c3"),
            "done",
        ]
    )
    agent = Agent("host", llm, tools=[greet, agreet])
    if use_async:
        result = asyncio.run(agent.arun("hello", deps=Deps("ada")))
    else:
        result = agent.run("hello", deps=Deps("ada"))
    assert [r.output for r in result.tool_calls] == ["Hi, ada", "Yo, ada (async)", "Bye, ada"]
    (id1, name, turn1, calls1, msgs1), (id2, _, turn2, calls2, msgs2) = SEEN
    assert id1 == id2 and len(id1) == 32 and name == "host"
    assert (turn1, calls1, msgs1) == (1, 1, 3)
    assert (turn2, calls2, msgs2) == (2, 2, 6)
    # The record keeps the model's arguments, without the context.
    assert result.tool_calls[0].arguments == {"greeting": "Hi"}


def test_each_run_has_its_own_id_and_deps():
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("greet", {"greeting": "Hi"}),
            "a",
            ScriptedLLM.tool_call("greet", {"greeting": "Hi"}),
            "b",
        ]
    )
    agent = Agent("host", llm, tools=[greet])
    first = agent.run("x", deps=Deps("ada"))
    second = agent.run("x", deps=Deps("bob"))
    assert (first.tool_calls[0].output, second.tool_calls[0].output) == ("Hi, ada", "Hi, bob")
    assert SEEN[0][0] != SEEN[1][0]


def test_the_model_cannot_supply_the_context():
    llm = ScriptedLLM([ScriptedLLM.tool_call("greet", {"greeting": "Hi", "ctx": {"deps": "forged"}}), "ok"])
    result = Agent("host", llm, tools=[greet]).run("x", deps=Deps("ada"))
    assert result.tool_calls[0].output == "Hi, ada"


def test_outside_a_run_the_context_is_none():
    @tool
    def who(ctx: RunContext, name: str) -> str:
        """Who is asking.

        Args:
            name: A name.
        """
        return f"{name}: {'no run' if ctx is None else ctx.agent}"

    reg = ToolRegistry()
    reg.register(who)
    assert reg.execute_tool("who", {"name": "n", "ctx": "forged"}).text == "n: no run"


def test_confirmation_sees_the_arguments_not_the_context():
    @tool(requires_confirmation=True)
    def drop(ctx: RunContext, table: str) -> str:
        """Drop a table.

        Args:
            table: The table.
        """
        return f"dropped {table} for {ctx.deps}"

    asked = []

    def confirm(tool_, params):
        asked.append(params)
        return True

    llm = ScriptedLLM([ScriptedLLM.tool_call("drop", {"table": "t"}), "ok"])
    result = Agent("host", llm, tools=[drop], confirm=confirm).run("x", deps="ops")
    assert asked == [{"table": "t"}]
    assert result.tool_calls[0].output == "dropped t for ops"
