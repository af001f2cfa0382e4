"""What a tool function's return value becomes (docs/results.md): the text the model reads, the
``data`` kept beside it, and the error (with a WARNING) for a value that has no JSON form."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import logging
import uuid
from collections import OrderedDict
from typing import Any, NamedTuple, TypedDict

import pydantic
import pytest
from agentmaker import Agent, ToolParameter, ToolRegistry, ToolResponse, tool
from agentmaker.testing import ScriptedLLM

ACCEPTED = (
    "which cannot be sent to the model as JSON; return str, JSON types (dict, list, str, int, "
    "float, bool, None), a dataclass, a pydantic model or an Enum"
)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    S = 1
    L = 3


@dataclasses.dataclass
class Point:
    x: int
    y: int
    tag: Color = Color.RED


class Movie(TypedDict):
    title: str
    year: int


class Pair(NamedTuple):
    left: int
    right: str


class Event(pydantic.BaseModel):
    name: str
    at: datetime.datetime
    points: list[Point] = []


class Opaque:
    """A class with no JSON form."""


CONVERTED: list[Any] = [
    pytest.param("plain text", "plain text", None, id="str"),
    pytest.param(None, "", None, id="none"),
    pytest.param({"a": [1, "é", None, True, 1.5]}, '{"a":[1,"é",null,true,1.5]}', None, id="dict"),
    pytest.param([1, [2, [3]]], "[1,[2,[3]]]", None, id="nested-list"),
    pytest.param(7, "7", None, id="int"),
    pytest.param(2.5, "2.5", None, id="float"),
    pytest.param(False, "false", None, id="bool"),
    pytest.param((1, "b"), '[1,"b"]', None, id="tuple"),
    pytest.param(Point(1, 2), '{"x":1,"y":2,"tag":"red"}', {"x": 1, "y": 2, "tag": "red"}, id="dataclass"),
    pytest.param(Movie(title="T", year=1999), '{"title":"T","year":1999}', None, id="typeddict"),
    pytest.param(Color.BLUE, '"blue"', "blue", id="enum"),
    pytest.param(Size.L, "3", None, id="int-enum"),
    pytest.param(
        Event(name="launch", at=datetime.datetime(2024, 5, 1, 12, 0), points=[Point(0, 1, Color.BLUE)]),
        '{"name":"launch","at":"2024-05-01T12:00:00","points":[{"x":0,"y":1,"tag":"blue"}]}',
        {"name": "launch", "at": "2024-05-01T12:00:00", "points": [{"x": 0, "y": 1, "tag": "blue"}]},
        id="pydantic",
    ),
    pytest.param(
        {"points": [Point(3, 4)], "colors": {"c": Color.RED}, Color.BLUE: 1},
        '{"points":[{"x":3,"y":4,"tag":"red"}],"colors":{"c":"red"},"blue":1}',
        {"points": [{"x": 3, "y": 4, "tag": "red"}], "colors": {"c": "red"}, "blue": 1},
        id="inside-containers",
    ),
    pytest.param({3, 1, 2}, "[1,2,3]", [1, 2, 3], id="set-sorted"),
    pytest.param(frozenset({"b", "a"}), '["a","b"]', ["a", "b"], id="frozenset"),
    pytest.param(Pair(1, "r"), '{"left":1,"right":"r"}', {"left": 1, "right": "r"}, id="namedtuple"),
    pytest.param(
        [datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.time(6, 7)],
        '["2024-01-02","2024-01-02T03:04:05","06:07:00"]',
        ["2024-01-02", "2024-01-02T03:04:05", "06:07:00"],
        id="dates-iso",
    ),
    pytest.param(datetime.timedelta(minutes=2), "120.0", 120.0, id="timedelta-seconds"),
    pytest.param(
        [uuid.UUID(int=1), decimal.Decimal("1.10")],
        '["00000000-0000-0000-0000-000000000001","1.10"]',
        ["00000000-0000-0000-0000-000000000001", "1.10"],
        id="uuid-decimal",
    ),
    pytest.param(OrderedDict(b=1, a=2), '{"b":1,"a":2}', None, id="dict-subclass"),
]


def _echo_tool(value: Any) -> Any:
    @tool
    def echo() -> Any:
        """Return the value under test."""
        return value

    return echo


@pytest.mark.parametrize(("value", "text", "data"), CONVERTED)
def test_conversion_to_text_and_data(
    value: Any, text: str, data: Any, caplog: pytest.LogCaptureFixture
) -> None:
    reg = ToolRegistry()
    reg.register(_echo_tool(value))
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        resp = reg.execute_tool("echo", {})
    assert resp.status == "success", resp.text
    assert resp.text == text
    if value is None or type(value) is str:
        assert resp.data is None
    else:
        assert resp.data == (value if data is None else data)
    assert caplog.records == []


def test_a_tool_response_and_a_json_value_are_passed_through_as_objects() -> None:
    given = ToolResponse.partial("half", data={"n": 1})
    reg = ToolRegistry()
    reg.register(_echo_tool(given))
    assert reg.execute_tool("echo", {}) is given
    payload = {"k": [1, 2]}
    reg.register(_echo_tool(payload), overwrite=True)
    assert reg.execute_tool("echo", {}).data is payload  # a JSON value is kept, not copied


REFUSED: list[Any] = [
    pytest.param(Opaque(), "returned a value of type Opaque, ", id="object"),
    pytest.param(
        b"\x00\x01",
        "returned a value of type bytes (decode text to str, or base64-encode binary data), ",
        id="bytes",
    ),
    pytest.param(
        {"blob": bytearray(b"x")},
        "returned a dict containing a value of type bytearray (decode text to str, or base64-encode binary "
        "data) at 'blob', ",
        id="bytearray-inside",
    ),
    pytest.param(
        {"a": [1, Opaque()]}, "returned a dict containing a value of type Opaque at 'a.1', ", id="nested"
    ),
    pytest.param(
        [Point(1, 2), {"p": Point(Opaque(), 1)}],  # type: ignore[arg-type]
        "returned a list containing a value of type Opaque at '1.p.x', ",
        id="in-a-dataclass",
    ),
    pytest.param(float("nan"), "returned the float nan (NaN and infinity are not JSON), ", id="nan"),
    pytest.param(
        {"v": float("inf")},
        "returned a dict containing the float inf (NaN and infinity are not JSON) at 'v', ",
        id="inf-inside",
    ),
    pytest.param(
        {(1, 2): "pair"},
        "returned a dict containing a dict key of type tuple (JSON object keys are strings) at '(1, 2)', ",
        id="tuple-key",
    ),
    pytest.param(print, "returned a value of type builtin_function_or_method, ", id="function"),
]


@pytest.mark.parametrize(("value", "middle"), REFUSED)
def test_values_with_no_json_form_are_errors_and_warnings(
    value: Any, middle: str, caplog: pytest.LogCaptureFixture
) -> None:
    reg = ToolRegistry()
    reg.register(_echo_tool(value))
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        resp = reg.execute_tool("echo", {})
    assert resp.is_error and resp.data is None
    assert resp.text == f"Error: tool 'echo' {middle}{ACCEPTED}"
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.name.startswith("agentmaker")
    assert record.getMessage() == resp.text


def test_a_value_containing_itself_is_refused() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    reg = ToolRegistry()
    reg.register(_echo_tool(loop))
    resp = reg.execute_tool("echo", {})
    assert resp.is_error
    assert resp.text.startswith(
        "Error: tool 'echo' returned a list nested too deeply (or containing itself), "
    )


class Fmt(enum.Enum):
    SHORT = "short"
    LONG = "long"


@tool
def fast_path() -> Any:
    """Plain signature: called from Rust."""
    return {"o": Opaque()}


@tool
def converted_path(fmt: Fmt = Fmt.SHORT) -> Any:
    """An Enum parameter: run through Python's argument conversion."""
    return {"o": Opaque(), "fmt": fmt}


@tool
async def async_path() -> Any:
    """Awaited on the async path."""
    return {"o": Opaque()}


def _dict_function(params: dict[str, Any]) -> Any:
    return {"o": Opaque()}


def _registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register_all([fast_path, converted_path, async_path])
    reg.register_function(_dict_function, "dict_path", "Takes the parameter dict.", [])
    return reg


def _expected(name: str) -> str:
    return f"Error: tool '{name}' returned a dict containing a value of type Opaque at 'o', {ACCEPTED}"


async def test_every_way_a_callable_tool_runs_applies_the_same_rules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reg = _registry()
    assert fast_path._fast_call is not None and converted_path._fast_call is None
    with caplog.at_level(logging.WARNING, logger="agentmaker"):
        for name in ("fast_path", "converted_path", "dict_path"):
            assert reg.execute_tool(name, {}).text == _expected(name)
            assert (await reg.aexecute_tool(name, {})).text == _expected(name)
        assert (await reg.aexecute_tool("async_path", {})).text == _expected("async_path")
        assert converted_path.run({}).text == _expected("converted_path")
        assert (await async_path.arun({})).text == _expected("async_path")
    assert len(caplog.records) == 9
    assert {r.levelno for r in caplog.records} == {logging.WARNING}


def test_an_agent_run_counts_such_a_call_as_an_error() -> None:
    llm = ScriptedLLM([ScriptedLLM.tool_call("fast_path", {}, call_id="c1"), "done"])
    result = Agent("a", llm, tools=[fast_path]).run("go")
    (call,) = result.tool_calls
    assert call.status == "error" and call.data is None
    assert result.messages[3]["content"] == _expected("fast_path")


def test_register_function_parameters_still_convert_results() -> None:
    reg = ToolRegistry()
    reg.register_function(
        lambda p: Point(p["x"], 0), "mk", "Make a point.", [ToolParameter("x", "integer", "X", required=True)]
    )
    resp = reg.execute_tool("mk", {"x": 5})
    assert resp.text == '{"x":5,"y":0,"tag":"red"}' and resp.data == {"x": 5, "y": 0, "tag": "red"}
