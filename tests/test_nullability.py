# ruff: noqa: UP045  (typing.Optional is one of the spellings under test)
"""Nullability in every rendering: a property is nullable exactly when its annotation admits
None (plain OpenAI, Anthropic, Gemini), or when it is optional in OpenAI's strict form; a null
the strict form lets the model send for an optional property reaches the tool as "absent"."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Literal, Optional, TypedDict

import jsonschema
import pydantic
import pytest
from agentmaker import Tool, ToolParameter, ToolRegistry, ToolResponse, tool


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Box:
    w: int
    h: int = 1


class Movie(TypedDict):
    title: str


class Query(pydantic.BaseModel):
    text: str
    limit: int = 5


_NO = object()

# (label, annotation, a non-None default, whether the annotation admits None)
ANNOTATIONS: list[tuple[str, Any, Any, bool]] = [
    ("literal", Literal["metric", "imperial"], "metric", False),
    ("enum", Color, Color.RED, False),
    ("int", int, 3, False),
    ("float", float, 1.5, False),
    ("str", str, "x", False),
    ("bool", bool, True, False),
    ("list_int", list[int], [1], False),
    ("dict_str_int", dict[str, int], {"a": 1}, False),
    ("dataclass", Box, Box(2), False),
    ("typeddict", Movie, {"title": "t"}, False),
    ("pydantic", Query, Query(text="q"), False),
    ("optional_int", Optional[int], 3, True),
    ("int_or_none", int | None, 3, True),
    ("optional_literal", Optional[Literal["a", "b"]], "a", True),
    ("enum_or_none", Color | None, Color.BLUE, True),
    ("dataclass_or_none", Box | None, Box(2), True),
]

CASES = [
    pytest.param(ann, default, admits, id=f"{label}-{kind}")
    for label, ann, value, admits in ANNOTATIONS
    for kind, default in (("required", _NO), ("default_none", None), ("default_value", value))
]


def make_tool(ann: Any, default: Any) -> Tool:
    if default is _NO:

        def probe(x):  # type: ignore[no-untyped-def]
            return {"got": repr(x)}
    else:

        def probe(x=default):  # type: ignore[no-untyped-def]
            return {"got": repr(x)}

    probe.__annotations__ = {"x": ann}
    probe.__doc__ = "Probe one annotation."
    return tool(probe)


def accepts_null(prop: dict[str, Any], root: dict[str, Any]) -> bool:
    schema = dict(prop)
    if "$defs" in root:
        schema["$defs"] = root["$defs"]
    return jsonschema.Draft202012Validator(schema).is_valid(None)


@pytest.mark.parametrize(("ann", "default", "admits"), CASES)
def test_nullable_exactly_when_the_annotation_admits_none(ann: Any, default: Any, admits: bool) -> None:
    t = make_tool(ann, default)
    reg = ToolRegistry()
    reg.register(t)
    schema = reg.get_schema("probe")
    assert accepts_null(schema["properties"]["x"], schema) is admits, schema
    openai = reg.to_openai_schema()[0]["function"]["parameters"]
    assert openai == schema
    anthropic = reg.to_anthropic_schema()[0]["input_schema"]
    assert accepts_null(anthropic["properties"]["x"], anthropic) is admits
    gemini_x = reg.to_gemini_schema()[0]["parameters"]["properties"]["x"]
    assert (gemini_x.get("nullable") is True) is admits, gemini_x
    assert gemini_x.get("type") != "null"
    required = default is _NO
    assert (schema["required"] == ["x"]) is required

    strict = reg.to_openai_schema(strict=True)[0]["function"]
    if strict.get("strict"):
        params = strict["parameters"]
        assert params["required"] == ["x"]  # strict mode lists every property
        # ... and an optional one is made nullable there ("null" = use the default)
        assert accepts_null(params["properties"]["x"], params) is (admits or not required), params
    else:  # dict[str, int] has no strict form: the plain schema is sent, unchanged
        assert "additional properties" in reg.strict_fallbacks()["probe"]
        assert strict["parameters"] == schema

    resp = reg.execute_tool("probe", {"x": None})
    if admits:
        assert resp.status == "success" and resp.data == {"got": "None"}
    elif required:
        assert resp.is_error
        assert "parameter 'x': null is not" in resp.text, resp.text
    else:  # the null meant "use the default"
        assert resp.status == "success", resp.text
        assert resp.data == {"got": repr(default)}


def test_the_reported_literal_with_a_default_is_not_nullable() -> None:
    @tool
    def forecast(city: str, unit: Literal["metric", "imperial"] = "metric") -> str:
        """Forecast."""
        return f"{city}:{unit}"

    reg = ToolRegistry()
    reg.register(forecast)
    assert reg.get_schema("forecast")["properties"]["unit"] == {
        "type": "string",
        "enum": ["metric", "imperial"],
        "default": "metric",
    }
    strict = reg.to_openai_schema(strict=True)[0]["function"]["parameters"]["properties"]["unit"]
    assert strict == {
        "type": ["string", "null"],
        "enum": ["metric", "imperial", None],
        "description": '(default: "metric")',
    }
    assert reg.execute_tool("forecast", {"city": "Oslo", "unit": None}).text == "Oslo:metric"
    bad = reg.execute_tool("forecast", {"city": "Oslo", "unit": "kelvin"})
    assert bad.is_error
    assert bad.text.endswith("""parameter 'unit': "kelvin" is not one of "metric" or "imperial\"""")


@dataclasses.dataclass
class Line:
    start: Box
    label: str = "line"
    boxes: list[Box] = dataclasses.field(default_factory=list)


class Page(pydantic.BaseModel):
    query: Query
    size: int = 20
    note: str | None = None


@tool
def draw(line: Line, page: Page | None = None) -> dict:
    """Draw a line."""
    return {"line": dataclasses.asdict(line), "page": page.model_dump() if page else None}


def test_nested_fields_with_defaults_are_not_nullable_and_strict_nulls_mean_default() -> None:
    reg = ToolRegistry()
    reg.register(draw)
    schema = reg.get_schema("draw")
    defs = schema["$defs"]
    by_suffix = {name.rsplit(".", 1)[-1]: d for name, d in defs.items()}
    assert by_suffix["Box"]["properties"]["h"] == {"type": "integer", "default": 1}
    assert by_suffix["Line"]["properties"]["label"] == {"type": "string", "default": "line"}
    assert by_suffix["Page"]["properties"]["size"] == {"type": "integer", "default": 20}
    assert accepts_null(by_suffix["Page"]["properties"]["note"], schema)
    strict = reg.to_openai_schema(strict=True)[0]["function"]
    assert strict["strict"] is True
    sent = {
        "line": {"start": {"w": 1, "h": None}, "label": None, "boxes": [{"w": 2, "h": None}]},
        "page": {"query": {"text": "q", "limit": None}, "size": None, "note": None},
    }
    jsonschema.Draft202012Validator(strict["parameters"]).validate(sent)
    resp = reg.execute_tool("draw", sent)
    assert resp.status == "success", resp.text
    assert resp.data == {
        "line": {"start": {"w": 1, "h": 1}, "label": "line", "boxes": [{"w": 2, "h": 1}]},
        "page": {"query": {"text": "q", "limit": 5}, "size": 20, "note": None},
    }


class Counter(Tool):
    """A hand-written tool: its optional parameter is not nullable either."""

    def __init__(self) -> None:
        super().__init__("counter", "Count.")
        self.seen: list[dict[str, Any]] = []

    def get_parameters(self) -> list[ToolParameter]:
        return [
            ToolParameter("start", "integer", "Where to start.", required=True),
            ToolParameter("step", "integer", "Step.", required=False, default=1),
        ]

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        self.seen.append(dict(parameters))
        return ToolResponse.ok("counted")


async def test_strict_nulls_reach_a_tool_subclass_as_absent_on_every_entry_point() -> None:
    counter = Counter()
    reg = ToolRegistry()
    reg.register(counter)
    props = reg.get_schema("counter")["properties"]
    assert props["step"] == {"type": "integer", "description": "Step.", "default": 1}
    strict = reg.to_openai_schema(strict=True)[0]["function"]["parameters"]
    assert strict["properties"]["step"]["type"] == ["integer", "null"]
    sent = {"start": 3, "step": None}
    assert reg.execute_tool("counter", sent).text == "counted"
    assert (await reg.aexecute_tool("counter", sent)).text == "counted"
    assert reg.validate("counter", sent) is None
    assert counter.seen == [{"start": 3}, {"start": 3}]
    assert sent == {"start": 3, "step": None}  # the caller's dict is left alone
    refused = reg.execute_tool("counter", {"start": None, "step": None})
    assert refused.is_error
    assert "parameter 'start'" in refused.text and "'step'" not in refused.text
