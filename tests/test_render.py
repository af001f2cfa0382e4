# ruff: noqa: UP045  (these tests exercise the typing.Optional / typing.Union spellings on purpose)
"""Provider renderings of inferred schemas: OpenAI strict, Anthropic, Gemini (via the registry)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional

import jsonschema
import pytest
from agentmaker import ToolRegistry, tool
from agentmaker.tools.render import NotStrict, gemini_schema, strict_schema


class Mode(enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class Level(enum.IntEnum):
    ONE = 1
    TWO = 2


@dataclasses.dataclass
class Item:
    name: str
    qty: int = 1


@dataclasses.dataclass
class Node:
    value: int
    children: list[Node] = dataclasses.field(default_factory=list)


@tool
def order(
    items: list[Item],
    mode: Mode = Mode.FAST,
    note: Optional[str] = None,
    level: Level = Level.ONE,
    when: Annotated[str, "ISO date"] = "today",
) -> str:
    """Place an order."""
    return "ok"


@tool
def counts(by_name: dict[str, int]) -> str:
    """Open mapping: no strict form."""
    return "ok"


@tool
def pair(p: tuple[int, str]) -> str:
    """Fixed tuple."""
    return "ok"


@tool
def anything(x: Any) -> str:
    """Any value."""
    return "ok"


@tool
def tree(root: Node) -> str:
    """Recursive type."""
    return "ok"


@tool
def nothing() -> str:
    """No parameters."""
    return "ok"


@pytest.fixture
def reg() -> ToolRegistry:
    r = ToolRegistry()
    for t in (order, counts, pair, anything, tree, nothing):
        r.register(t)
    return r


def _objects(schema: Any) -> list[dict]:
    out = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" or (
            isinstance(schema.get("type"), list) and "object" in schema["type"]
        ):
            out.append(schema)
        for v in schema.values():
            out += _objects(v)
    elif isinstance(schema, list):
        for v in schema:
            out += _objects(v)
    return out


def test_strict_form(reg: ToolRegistry) -> None:
    by_name = {t["function"]["name"]: t["function"] for t in reg.to_openai_schema(strict=True)}
    fn = by_name["order"]
    assert fn["strict"] is True
    params = fn["parameters"]
    assert params["required"] == ["items", "mode", "note", "level", "when"]
    for obj in _objects(params):
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    assert params["properties"]["mode"] == {
        "type": ["string", "null"],
        "enum": ["fast", "slow", None],
        "description": '(default: "fast")',
    }
    assert params["properties"]["when"]["description"] == 'ISO date (default: "today")'
    assert params["$defs"]["Item"]["properties"]["qty"]["type"] == ["integer", "null"]
    # What the strict form lets the model send is accepted: a null for an optional property
    # whose own schema refuses null (mode, level, when, items[].qty) is dropped by the
    # registry's validation; the plain schema itself stays non-nullable there.
    validator = jsonschema.Draft202012Validator(reg.get_schema("order"))
    sent = {"items": [{"name": "a", "qty": None}], "mode": None, "note": None, "level": None, "when": None}
    jsonschema.Draft202012Validator(params).validate(sent)
    assert not validator.is_valid(sent)
    validator.validate({"items": [{"name": "a"}], "note": None})
    assert reg.execute_tool("order", sent).text == "ok"
    assert by_name["tree"]["strict"] is True
    assert by_name["nothing"]["strict"] is True
    assert by_name["nothing"]["parameters"] == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_strict_fallbacks_are_reported(reg: ToolRegistry) -> None:
    reasons = reg.strict_fallbacks()
    assert set(reasons) == {"counts", "pair", "anything"}
    assert "additional properties" in reasons["counts"] and "by_name" in reasons["counts"]
    assert "prefixItems" in reasons["pair"]
    assert "accepts any value" in reasons["anything"]
    plain = {t["function"]["name"]: t["function"] for t in reg.to_openai_schema(strict=True)}
    assert "strict" not in plain["counts"]
    assert plain["counts"]["parameters"] == reg.get_schema("counts")


def test_renderings_follow_names_and_are_cached(reg: ToolRegistry) -> None:
    first = reg.to_openai_schema(["tree", "order", "tree", "missing"], strict=True)
    assert [t["function"]["name"] for t in first] == ["tree", "order"]
    again = reg.to_openai_schema(["tree"], strict=True)
    assert again[0] is first[0]
    assert reg.to_anthropic_schema()[0] is reg.to_anthropic_schema()[0]
    reg.register(order, overwrite=True)
    assert [t["function"]["name"] for t in reg.to_openai_schema(strict=True)][:1] == ["order"]


def test_anthropic(reg: ToolRegistry) -> None:
    tools = reg.to_anthropic_schema(["order", "nothing"])
    assert tools[0] == {
        "name": "order",
        "description": "Place an order.",
        "input_schema": reg.get_schema("order"),
    }
    assert tools[1]["input_schema"] == {"type": "object", "properties": {}, "required": []}


_GEMINI_ALLOWED = {
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "default",
    "title",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
}


def _keys(schema: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(schema, dict):
        keys |= set(schema)
        for k, v in schema.items():
            if k == "properties":
                for sub in v.values():
                    keys |= _keys(sub)
            elif k in ("items",):
                keys |= _keys(v)
            elif k == "anyOf":
                for sub in v:
                    keys |= _keys(sub)
    return keys


def test_gemini(reg: ToolRegistry) -> None:
    decls = {d["name"]: d for d in reg.to_gemini_schema()}
    for d in decls.values():
        assert _keys(d.get("parameters", {})) <= _GEMINI_ALLOWED
    order_params = decls["order"]["parameters"]
    assert order_params["properties"]["items"]["items"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "qty": {"type": "integer", "default": 1},
        },
        "required": ["name"],
    }
    assert order_params["properties"]["mode"] == {
        "type": "string",
        "enum": ["fast", "slow"],
        "default": "fast",
    }
    assert order_params["properties"]["level"]["description"] == "Allowed values: 1, 2"
    assert "enum" not in order_params["properties"]["level"]
    assert order_params["properties"]["note"] == {"type": "string", "nullable": True}
    assert decls["counts"]["parameters"]["properties"]["by_name"] == {"type": "object"}
    assert decls["pair"]["parameters"]["properties"]["p"]["items"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    }
    assert "parameters" not in decls["nothing"]
    root = decls["tree"]["parameters"]["properties"]["root"]
    assert root["properties"]["children"]["items"] == {
        "type": "object",
        "description": "a nested Node object",
    }


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (
            {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
            {"anyOf": [{"type": "integer"}, {"type": "string"}], "nullable": True},
        ),
        ({"type": ["integer", "string"]}, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        ({"const": "x"}, {"enum": ["x"]}),
        ({"type": "string", "format": "uuid"}, {"type": "string"}),
        ({"type": "string", "format": "date-time"}, {"type": "string", "format": "date-time"}),
        (
            {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
            {"type": "array", "items": {"type": "string"}},
        ),
    ],
)
def test_gemini_schema_table(schema: dict, expected: dict) -> None:
    assert gemini_schema(schema) == expected


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "array"}, "the root schema must be an object"),
        (
            {
                "type": "object",
                "properties": {"s": {"type": "array", "uniqueItems": True, "items": {"type": "string"}}},
            },
            "parameter 's' uses 'uniqueItems'",
        ),
        ({"type": "object", "properties": {"d": {"type": "object"}}}, "parameter 'd' is a free-form object"),
        (
            {"type": "object", "properties": {"a": {"type": "array"}}},
            "parameter 'a' is an array without an item type",
        ),
        ({"type": "object", "properties": {"s": {"type": "string", "minLength": 1}}}, "'minLength'"),
    ],
)
def test_strict_refusals(schema: dict, reason: str) -> None:
    with pytest.raises(NotStrict, match=reason):
        strict_schema(schema)


def test_strict_drops_annotations_and_unknown_formats() -> None:
    form = strict_schema(
        {
            "type": "object",
            "title": "T",
            "properties": {
                "p": {"type": "string", "format": "path", "title": "P", "examples": ["a"]},
                "d": {"type": "string", "format": "date"},
            },
            "required": ["p", "d"],
        }
    )
    assert form == {
        "type": "object",
        "properties": {"p": {"type": "string"}, "d": {"type": "string", "format": "date"}},
        "required": ["p", "d"],
        "additionalProperties": False,
    }


def test_strict_makes_optional_properties_nullable() -> None:
    form = strict_schema(
        {
            "type": "object",
            "properties": {
                "a": {"type": "integer"},
                "b": {"$ref": "#/$defs/X"},
                "c": {"type": "string", "enum": ["x"]},
            },
            "required": ["a"],
            "$defs": {"X": {"type": "object", "properties": {"y": {"type": "integer"}}}},
        }
    )
    assert form["properties"]["b"] == {"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}]}
    assert form["properties"]["c"] == {"type": ["string", "null"], "enum": ["x", None]}
    assert form["$defs"]["X"] == {
        "type": "object",
        "properties": {"y": {"type": ["integer", "null"]}},
        "required": ["y"],
        "additionalProperties": False,
    }


def test_literal_and_required_strict() -> None:
    @tool
    def pick(kind: Literal["a", "b"], n: int) -> str:
        return kind * n

    r = ToolRegistry()
    r.register(pick)
    fn = r.to_openai_schema(strict=True)[0]["function"]
    assert fn["parameters"]["properties"] == {
        "kind": {"type": "string", "enum": ["a", "b"]},
        "n": {"type": "integer"},
    }
    assert r.strict_fallbacks() == {}
