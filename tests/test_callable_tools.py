# ruff: noqa: UP045, B008  (Optional spellings are exercised on purpose; pydantic.Field defaults are the idiom under test)
"""@tool, Tool.from_callable, register_callable and register_function through the real registry.

This module uses ``from __future__ import annotations``: every annotation below is a string that
the inference must resolve (tests/test_inference.py covers real annotation objects).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import functools
from typing import Annotated, Literal, Optional

import jsonschema
import pydantic
import pytest
from agentmaker import Tool, ToolParameter, ToolRegistrationError, ToolRegistry, ToolResponse, tool


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


@dataclasses.dataclass
class Window:
    start: datetime.date
    days: int = 1


class Query(pydantic.BaseModel):
    text: str
    limit: int = 5


@tool
def get_weather(city: Annotated[str, "city name"], days: int = 3, unit: Unit = Unit.C) -> str:
    """Query the weather for a city over the next few days.

    Args:
        city: Ignored because Annotated wins.
        days: How many days ahead.
        unit: Temperature unit.
    """
    return f"{city}:{days}:{unit.value}"


@tool(
    name="plan",
    description="Plan a trip.",
    requires_confirmation=True,
    external_content=True,
    supports_parallel=True,
    timeout=2.5,
)
def plan_trip(window: Window, tags: set[str] | None = None) -> dict:
    return {"start": window.start, "days": window.days, "tags": sorted(tags or [])}


def registry_with(*tools: Tool) -> ToolRegistry:
    reg = ToolRegistry()
    for t in tools:
        reg.register(t)
    return reg


def test_decorator_produces_a_tool_that_still_calls_the_function() -> None:
    assert isinstance(get_weather, Tool)
    assert get_weather.name == "get_weather"
    assert get_weather.description == "Query the weather for a city over the next few days."
    assert get_weather("Paris", 2, Unit.F) == "Paris:2:fahrenheit"
    assert get_weather.__doc__.startswith("Query the weather")


def test_decorator_keywords() -> None:
    assert plan_trip.name == "plan"
    assert plan_trip.description == "Plan a trip."
    assert (plan_trip.requires_confirmation, plan_trip.external_content, plan_trip.supports_parallel) == (
        True,
        True,
        True,
    )
    assert plan_trip.timeout == 2.5
    assert get_weather.requires_confirmation is False and get_weather.timeout is None


def test_registry_schema_is_the_inferred_one() -> None:
    reg = registry_with(get_weather)
    schema = reg.get_schema("get_weather")
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "city name"},
            "days": {"type": "integer", "description": "How many days ahead.", "default": 3},
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "Temperature unit.",
                "default": "celsius",
            },
        },
        "required": ["city"],
    }
    assert reg.to_openai_schema()[0]["function"]["parameters"] == schema
    params = get_weather.get_parameters()
    assert [(p.name, p.type, p.required) for p in params] == [
        ("city", "string", True),
        ("days", "integer", False),
        ("unit", "string", False),
    ]
    assert isinstance(params[0], ToolParameter)


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({"city": "Oslo"}, "Oslo:3:celsius"),
        ({"city": "Oslo", "days": None}, "Oslo:3:celsius"),  # null means "use the default"
        ({"city": "Oslo", "days": 5, "unit": "fahrenheit", "extra": 1}, "Oslo:5:fahrenheit"),  # extra dropped
        ({"city": "Oslo", "unit": None}, "Oslo:3:celsius"),
    ],
)
def test_execute(args: dict, text: str) -> None:
    reg = registry_with(get_weather)
    resp = reg.execute_tool("get_weather", args)
    assert (resp.status, resp.text) == ("success", text)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"days": 1}, "city"),
        ({"city": 5}, "city"),
        ({"city": "x", "unit": "kelvin"}, "unit"),
        ({"city": None}, "city"),
    ],
)
def test_bad_arguments_are_error_responses(args: dict, needle: str) -> None:
    resp = registry_with(get_weather).execute_tool("get_weather", args)
    assert resp.status == "error"
    assert "failed parameter validation" in resp.text and needle in resp.text


def test_conversion_and_json_result() -> None:
    reg = registry_with(plan_trip)
    resp = reg.execute_tool("plan", {"window": {"start": "2024-06-01"}, "tags": ["b", "a"]})
    assert resp.status == "success"
    assert resp.text == '{"start":"2024-06-01","days":1,"tags":["a","b"]}'
    assert resp.data == {"start": "2024-06-01", "days": 1, "tags": ["a", "b"]}
    bad = reg.execute_tool("plan", {"window": {"start": "June"}})
    assert bad.status == "error"
    # The validator checks formats itself; the converter's own message is the second line of defence.
    assert bad.text.startswith("Error: tool 'plan' failed parameter validation: parameter 'window.start': ")
    assert "June" in bad.text


@tool
def returns_none(a: int) -> None:
    return None


@tool
def returns_list(a: int) -> list:
    return [a, "é", None, True]


@tool
def returns_dataclass(start: str) -> Window:
    return Window(datetime.date.fromisoformat(start), 2)


@tool
def returns_model(text: str) -> Query:
    return Query(text=text)


@tool
def returns_response(a: int) -> ToolResponse:
    return ToolResponse.partial("half", data={"a": a})


@tool
def returns_float(a: float) -> float:
    return a / 2


@pytest.mark.parametrize(
    ("t", "args", "text", "data"),
    [
        (returns_none, {"a": 1}, "", None),
        (returns_list, {"a": 1}, '[1,"é",null,true]', [1, "é", None, True]),
        (
            returns_dataclass,
            {"start": "2024-01-02"},
            '{"start":"2024-01-02","days":2}',
            {"start": "2024-01-02", "days": 2},
        ),
        (returns_model, {"text": "q"}, '{"text":"q","limit":5}', {"text": "q", "limit": 5}),
        (returns_float, {"a": 3}, "1.5", 1.5),
    ],
)
def test_return_values(t: Tool, args: dict, text: str, data: object) -> None:
    resp = registry_with(t).execute_tool(t.name, args)
    assert (resp.status, resp.text, resp.data) == ("success", text, data)


def test_tool_response_passes_through() -> None:
    resp = registry_with(returns_response).execute_tool("returns_response", {"a": 1})
    assert (resp.status, resp.text, resp.data) == ("partial", "half", {"a": 1})


def test_pydantic_argument() -> None:
    @tool
    def search(q: Query) -> str:
        return f"{q.text}/{q.limit}"

    reg = registry_with(search)
    assert reg.execute_tool("search", {"q": {"text": "a"}}).text == "a/5"
    assert reg.execute_tool("search", {"q": {"text": "a", "limit": None}}).text == "a/5"
    assert reg.execute_tool("search", {"q": {"limit": 1}}).status == "error"


# ---------------------------------------------------------------------------------------------
# Async


@tool
async def slow_echo(text: str, delay: float = 0.0) -> str:
    await asyncio.sleep(delay)
    return text.upper()


async def test_async_tool_is_awaited_on_the_async_path() -> None:
    reg = registry_with(slow_echo)
    resp = await reg.aexecute_tool("slow_echo", {"text": "hi", "delay": 0.001})
    assert (resp.status, resp.text) == ("success", "HI")


def test_async_tool_runs_to_completion_on_the_sync_path_without_a_loop() -> None:
    resp = registry_with(slow_echo).execute_tool("slow_echo", {"text": "hi", "delay": 0.001})
    assert (resp.status, resp.text) == ("success", "HI")


async def test_async_tool_on_the_sync_path_inside_a_loop_says_use_aexecute_tool() -> None:
    resp = registry_with(slow_echo).execute_tool("slow_echo", {"text": "hi"})
    assert resp.status == "error"
    assert "aexecute_tool" in resp.text


async def test_sync_tool_on_the_async_path() -> None:
    resp = await registry_with(get_weather).aexecute_tool(
        "get_weather", {"city": "Rome", "unit": "fahrenheit"}
    )
    assert resp.text == "Rome:3:fahrenheit"


async def test_async_conversion_error() -> None:
    @tool
    async def when(day: datetime.date) -> str:
        return day.isoformat()

    reg = registry_with(when)
    assert (await reg.aexecute_tool("when", {"day": "2024-02-03"})).text == "2024-02-03"
    resp = await reg.aexecute_tool("when", {"day": "x"})
    assert resp.status == "error" and "parameter 'day'" in resp.text


# ---------------------------------------------------------------------------------------------
# Other callables


class Counter:
    """Counts things."""

    def __init__(self) -> None:
        self.total = 0

    def add(self, n: int = 1) -> int:
        """Add n to the total.

        Args:
            n: How much to add.
        """
        self.total += n
        return self.total

    @staticmethod
    def double(n: int) -> int:
        return n * 2

    def __call__(self, n: int) -> int:
        """Add n (callable object)."""
        return self.add(n)


class AsyncCallable:
    async def __call__(self, word: str) -> str:
        return word[::-1]


def power(base: int, exp: int = 2, *, secret: str = "k") -> str:
    return f"{base**exp}:{secret}"


def positional(a: int, b: int = 10, /, c: int = 100) -> int:
    return a + b + c


def decorated_wrapper(func):  # a functools.wraps decorator
    @functools.wraps(func)
    def inner(*args, **kwargs):
        return func(*args, **kwargs) * 10

    return inner


@decorated_wrapper
def wrapped(x: int) -> int:
    return x


def test_bound_method() -> None:
    c = Counter()
    t = Tool.from_callable(c.add)
    assert t.name == "add" and t.description == "Add n to the total."
    assert t.get_input_schema()["properties"]["n"]["description"] == "How much to add."
    reg = registry_with(t)
    assert reg.execute_tool("add", {"n": 5}).text == "5"
    assert reg.execute_tool("add", {}).text == "6"
    assert c.total == 6


def test_staticmethod() -> None:
    t = Tool.from_callable(Counter.__dict__["double"])
    assert registry_with(t).execute_tool("double", {"n": 4}).text == "8"


def test_callable_object() -> None:
    t = Tool.from_callable(Counter())
    assert t.name == "Counter"
    assert t.description == "Add n (callable object)."
    assert registry_with(t).execute_tool("Counter", {"n": 3}).text == "3"


async def test_async_callable_object() -> None:
    t = Tool.from_callable(AsyncCallable(), name="rev")
    reg = registry_with(t)
    assert (await reg.aexecute_tool("rev", {"word": "abc"})).text == "cba"


def test_partial_hides_bound_keywords() -> None:
    t = Tool.from_callable(functools.partial(power, secret="hidden"), name="power")
    schema = t.get_input_schema()
    assert set(schema["properties"]) == {"base", "exp"}
    assert "hidden" not in str(schema)
    reg = registry_with(t)
    assert reg.execute_tool("power", {"base": 3, "secret": "model-chosen"}).text == "9:hidden"


def test_partial_with_positional_binding() -> None:
    t = Tool.from_callable(functools.partial(power, 2))
    assert t.name == "power"
    assert list(t.get_input_schema()["properties"]) == ["exp", "secret"]
    assert registry_with(t).execute_tool("power", {"exp": 3}).text == "8:k"


@pytest.mark.parametrize(
    ("args", "total"),
    [
        ({"a": 1}, 111),
        ({"a": 1, "b": 2}, 103),
        ({"a": 1, "c": 0}, 11),
        ({"a": 1, "b": None, "c": 5}, 16),
    ],
)
def test_positional_only_parameters(args: dict, total: int) -> None:
    t = Tool.from_callable(positional)
    assert registry_with(t).execute_tool("positional", args).text == str(total)


def test_functools_wraps_decorated_function() -> None:
    t = Tool.from_callable(wrapped)
    assert list(t.get_input_schema()["properties"]) == ["x"]
    assert registry_with(t).execute_tool("wrapped", {"x": 2}).text == "20"


def test_forward_reference_to_a_later_class() -> None:
    def uses_later(item: LaterDefined) -> str:
        return item.name

    t = Tool.from_callable(uses_later)
    assert registry_with(t).execute_tool("uses_later", {"item": {"name": "n"}}).text == "n"


@dataclasses.dataclass
class LaterDefined:
    name: str


def test_literal_and_optional_strings() -> None:
    @tool
    def pick(mode: Literal["fast", "slow"], note: Optional[str] = None) -> str:
        return f"{mode}:{note}"

    reg = registry_with(pick)
    assert reg.get_schema("pick")["properties"]["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert reg.execute_tool("pick", {"mode": "fast"}).text == "fast:None"
    assert reg.execute_tool("pick", {"mode": "slow", "note": None}).text == "slow:None"
    assert reg.execute_tool("pick", {"mode": "medium"}).status == "error"


# ---------------------------------------------------------------------------------------------
# register_callable / register_function


def test_register_callable() -> None:
    reg = ToolRegistry()

    def shout(text: str) -> str:
        """Shout it."""
        return text.upper() + "!"

    t = reg.register_callable(shout, requires_confirmation=True)
    assert isinstance(t, Tool) and t.requires_confirmation
    assert reg.get("shout") is t
    assert reg.execute_tool("shout", {"text": "hey"}).text == "HEY!"
    with pytest.raises(ToolRegistrationError, match="already registered"):
        reg.register_callable(shout)
    reg.register_callable(shout, overwrite=True, description="Louder.")
    assert reg.get("shout").description == "Louder."
    with pytest.raises(TypeError, match="unexpected keyword"):
        reg.register_callable(shout, name="x", colour="red")


def test_register_function_gets_the_whole_dict() -> None:
    reg = ToolRegistry()
    seen = []

    def handler(params: dict) -> dict:
        seen.append(params)
        return {"keys": sorted(params)}

    reg.register_function(
        handler,
        "handle",
        "Handle a request.",
        [ToolParameter("a", "integer", "An a."), ToolParameter("b", "string", required=False)],
        supports_parallel=True,
    )
    assert reg.get("handle").supports_parallel
    resp = reg.execute_tool("handle", {"a": 1, "b": "x"})
    assert (resp.text, resp.data) == ('{"keys":["a","b"]}', {"keys": ["a", "b"]})
    assert seen == [{"a": 1, "b": "x"}]
    assert reg.get_schema("handle")["required"] == ["a"]


async def test_register_function_async() -> None:
    reg = ToolRegistry()

    async def handler(params: dict) -> str:
        await asyncio.sleep(0)
        return str(params["a"] * 2)

    reg.register_function(handler, "twice", "Double.", [ToolParameter("a", "integer")])
    assert (await reg.aexecute_tool("twice", {"a": 4})).text == "8"
    assert "aexecute_tool" in reg.execute_tool("twice", {"a": 4}).text


def test_register_function_sync_path_without_loop() -> None:
    reg = ToolRegistry()

    async def handler(params: dict) -> str:
        return "ok"

    reg.register_function(handler, "h", "H.", [])
    assert reg.execute_tool("h", {}).text == "ok"


def test_tool_raising_becomes_an_error_response() -> None:
    @tool
    def boom(a: int) -> str:
        raise KeyError("k")

    resp = registry_with(boom).execute_tool("boom", {"a": 1})
    assert resp.status == "error"
    assert resp.text == "Error: tool 'boom' raised during execution: KeyError: 'k'"


def test_schema_validates_with_jsonschema() -> None:
    for t in (get_weather, plan_trip, returns_model):
        jsonschema.Draft202012Validator.check_schema(t.get_input_schema())


def test_definition_errors_at_decoration_time() -> None:
    with pytest.raises(ToolRegistrationError, match="missing a type annotation"):

        @tool
        def bad(a) -> None:  # type: ignore[no-untyped-def]
            pass

    with pytest.raises(ToolRegistrationError, match="timeout must be a positive number"):

        @tool(timeout=-1)
        def bad_timeout(a: int) -> None:
            pass


# ---------------------------------------------------------------------------------------------
# Inside the Agent loop


def _agent_with(t: Tool, args: dict):
    from agentmaker import Agent
    from agentmaker.testing import ScriptedLLM

    llm = ScriptedLLM([ScriptedLLM.tool_call(t.name, args), "done"])
    return Agent("assistant", llm, tools=[t])


def test_async_tool_in_a_sync_agent_run() -> None:
    result = _agent_with(slow_echo, {"text": "hey", "delay": 0.001}).run("go")
    assert result.final_output == "done"
    assert [(r.status, r.output) for r in result.tool_calls] == [("success", "HEY")]


async def test_async_tool_in_an_async_agent_run() -> None:
    result = await _agent_with(slow_echo, {"text": "hey"}).arun("go")
    assert [(r.status, r.output) for r in result.tool_calls] == [("success", "HEY")]


def test_converting_tool_in_an_agent_run() -> None:
    @tool
    def span(window: Window) -> dict:
        return {"start": window.start, "days": window.days}

    result = _agent_with(span, {"window": {"start": "2024-06-01", "days": None}}).run("go")
    assert [r.output for r in result.tool_calls] == ['{"start":"2024-06-01","days":1}']


def test_pydantic_field_as_default() -> None:
    @tool
    def page(
        size: int = pydantic.Field(20, ge=1, le=100, description="Page size."),
        tags: list[str] = pydantic.Field(default_factory=list),
        query: str = pydantic.Field(description="Search text."),
    ) -> str:
        return f"{query}:{size}:{tags}"

    schema = page.get_input_schema()
    assert schema["properties"]["size"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "description": "Page size.",
        "default": 20,
    }
    assert "default" not in schema["properties"]["tags"]
    assert schema["required"] == ["query"]
    reg = registry_with(page)
    assert reg.execute_tool("page", {"query": "q"}).text == "q:20:[]"
    assert reg.execute_tool("page", {"query": "q", "size": None, "tags": ["a"]}).text == "q:20:['a']"
    assert reg.execute_tool("page", {"query": "q", "size": 0}).status == "error"
    assert [p.default for p in page.get_parameters()] == [20, None, None]


def test_a_plain_function_marked_as_a_coroutine_function_is_async():
    # It returns a coroutine without being `async def`. On Python 3.11 only asyncio's mark
    # says so, which inspect does not read.
    import inspect

    async def impl(x: int) -> int:
        return x * 2

    def doubled(x: int) -> int:
        """Double x."""
        return impl(x)  # type: ignore[return-value]

    if hasattr(inspect, "markcoroutinefunction"):
        inspect.markcoroutinefunction(doubled)
    else:
        doubled._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]
    t = tool(doubled)
    assert t.is_async
    reg = ToolRegistry()
    reg.register(t)
    assert asyncio.run(reg.aexecute_tool("doubled", {"x": 2})).text == "4"
    outer = ToolRegistry()
    outer.register_callable(reg.aexecute_tool, name="nested")
    assert outer.get("nested").is_async
    resp = asyncio.run(outer.aexecute_tool("nested", {"name": "doubled", "parameters": {"x": 5}}))
    assert resp.text == "10"
