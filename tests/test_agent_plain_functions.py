"""Plain functions in ``Agent(tools=[...])``: inferred exactly like ``@tool`` (schema from the
signature and docstring, the same definition-time errors)."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from agentmaker import Agent, ToolRegistrationError, tool
from agentmaker.testing import ScriptedLLM


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    """Get the weather for a city.

    Args:
        city: The city's name.
        unit: Celsius or Fahrenheit.
    """
    return f"sunny in {city} ({unit})"


class Shop:
    def __init__(self) -> None:
        self.stock = {"apple": 3}

    def count(self, item: str) -> int:
        """How many of an item are in stock."""
        return self.stock.get(item, 0)


def test_plain_functions_and_methods_are_tools_with_the_decorators_schema():
    shop = Shop()
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("get_weather", {"city": "Oslo"}, call_id="c1"),
            ScriptedLLM.tool_call("count", {"item": "apple"}, call_id="c2"),
            "done",
        ]
    )
    agent = Agent("a", llm, tools=[get_weather, shop.count])
    result = agent.run("weather and apples")
    assert [(c.name, c.status, c.output) for c in result.tool_calls] == [
        ("get_weather", "success", "sunny in Oslo (c)"),
        ("count", "success", "3"),
    ]
    offered = llm.requests[0].tools
    assert [t["function"]["name"] for t in offered] == ["get_weather", "count"]
    decorated = Agent("b", ScriptedLLM(["x"]), tools=[tool(get_weather), tool(shop.count)])
    assert agent.tool_registry.to_openai_schema() == decorated.tool_registry.to_openai_schema()
    fn = agent.tool_registry.to_openai_schema()[0]["function"]
    assert fn["description"] == "Get the weather for a city."
    assert fn["parameters"]["properties"]["unit"]["enum"] == ["c", "f"]
    assert fn["parameters"]["required"] == ["city"]


def no_annotation(x):  # type: ignore[no-untyped-def]
    return x


def variadic(*args: int) -> int:
    return 0


def gen(n: int):  # type: ignore[no-untyped-def]
    yield n


@pytest.mark.parametrize("func", [no_annotation, variadic, gen, lambda x: x])
def test_the_same_definition_time_errors_as_the_decorator(func: Any):
    with pytest.raises(ToolRegistrationError) as decorated:
        tool(func)
    with pytest.raises(ToolRegistrationError) as plain:
        Agent("a", ScriptedLLM(["x"]), tools=[func])
    assert str(plain.value) == str(decorated.value)


@pytest.mark.parametrize(("item", "what"), [(42, "int"), ("get_weather", "tools must be a list")])
def test_what_is_neither_a_tool_nor_a_function_is_still_refused(item: Any, what: str):
    with pytest.raises((ToolRegistrationError, TypeError), match=what):
        Agent("a", ScriptedLLM(["x"]), tools=[item] if item == 42 else item)
