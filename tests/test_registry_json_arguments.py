"""``execute_tool`` and ``aexecute_tool`` take the arguments as a model sends them, the JSON text
of an object, through the same admission as an agent's call: the same parsing and the same
texts for what is not an object."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agentmaker import Agent, LLMResponse, ToolRegistry, ToolResponse, tool
from agentmaker.testing import ScriptedLLM


@tool
def add(a: int, b: int = 0) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
async def aadd(a: int, b: int = 0) -> int:
    """Add two numbers, asynchronously.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(add)
    reg.register(aadd)
    return reg


def test_json_text_arguments_are_read_as_the_agent_reads_them():
    reg = registry()
    assert reg.execute_tool("add", '{"a": 1}') == ToolResponse.ok("1", data=1)
    assert reg.execute_tool("add", '{"a": 1, "b": 2}').data == 3
    assert reg.execute_tool("add", {"a": 1, "b": 2}).data == 3  # a dict still works
    assert reg.validate("add", '{"a": 1}') is None
    # An empty text is no arguments, as in a model's call.
    assert reg.execute_tool("add", "").text == (
        "Error: tool 'add' failed parameter validation: parameter 'a': is required but missing"
    )


async def test_json_text_arguments_work_awaited_too():
    reg = registry()
    assert (await reg.aexecute_tool("aadd", '{"a": 2, "b": 3}')).data == 5
    assert (await reg.aexecute_tool("add", '{"a": 4}')).data == 4
    assert (await reg.aexecute_tool("aadd", {"a": 1})).data == 1
    assert (
        await reg.aexecute_tool("aadd", "[1]")
    ).text == "Error: arguments for tool 'aadd' must be a JSON object"


@pytest.mark.parametrize(
    "text, error",
    [
        ("[1, 2]", "Error: arguments for tool 'add' must be a JSON object"),
        ('"a"', "Error: arguments for tool 'add' must be a JSON object"),
        ("7", "Error: arguments for tool 'add' must be a JSON object"),
        ("null", "Error: arguments for tool 'add' must be a JSON object"),
        ("{oops", "Error: arguments for tool 'add' are not valid JSON"),
        ('{"a": NaN}', "Error: arguments for tool 'add' are not valid JSON"),
        ('{"a": ' + "[" * 200 + "]" * 200 + "}", "Error: arguments for tool 'add' are nested too deeply"),
    ],
)
def test_a_json_text_that_is_not_an_object_gets_the_cores_text(text, error):
    reg = registry()
    assert reg.execute_tool("add", text) == ToolResponse.error(error)
    assert reg.validate("add", text) == ToolResponse.error(error)
    assert asyncio.run(reg.aexecute_tool("add", text)) == ToolResponse.error(error)


def test_the_agent_answers_the_same_call_with_the_same_text():
    reg = registry()
    call: dict[str, Any] = {
        "id": "c1",
        "type": "function",
        "function": {"name": "add", "arguments": "[1, 2]"},
    }
    reply = LLMResponse(content="", model="test", finish_reason="tool_calls", tool_calls=[call])
    result = Agent("a", ScriptedLLM([reply, "done"]), tools=[add]).run("go")
    assert result.tool_calls[0].output == reg.execute_tool("add", "[1, 2]").text
