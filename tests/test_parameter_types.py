"""ToolParameter checks its type when built: JSON Schema words, common spellings mapped to
them, and a ToolConfigError naming the parameter, the word and the allowed types otherwise."""

from __future__ import annotations

import pickle

import pytest
from agentmaker import ToolConfigError, ToolParameter, ToolRegistry


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("string", "string"),
        ("String", "string"),
        (" INTEGER ", "integer"),
        ("str", "string"),
        ("int", "integer"),
        ("long", "integer"),
        ("float", "number"),
        ("double", "number"),
        ("bool", "boolean"),
        ("Boolean", "boolean"),
        ("list", "array"),
        ("tuple", "array"),
        ("dict", "object"),
        ("null", "null"),
        ("Any", "any"),
        (str, "string"),
        (int, "integer"),
        (float, "number"),
        (bool, "boolean"),
        (list, "array"),
        (dict, "object"),
    ],
)
def test_common_spellings_become_json_schema_words(given, stored):
    assert ToolParameter("p", given).type == stored


@pytest.mark.parametrize(
    ("given", "advice"),
    [
        ("enum", '"enum": [...]'),
        ("datetime", '"format": "date-time"'),
        ("date", '"format": "date"'),
        ("bytes", 'use type "string"'),
        ("decimal", 'use type "number"'),
        ("HashMap", 'use type "object"'),
        ("NoneType", 'use type "null"'),
        ("strng", ""),
        ("", "the type is empty"),
    ],
)
def test_unknown_types_fail_at_construction_with_the_allowed_list(given, advice):
    with pytest.raises(ToolConfigError) as err:
        ToolParameter("unit", given, "the unit")
    text = str(err.value)
    assert text.startswith(f"ToolParameter 'unit' has type \"{given}\", which is not a JSON Schema type;")
    assert advice in text
    assert "allowed types: string, integer, number, boolean, array, object, null, any" in text
    assert "str, int, long, float, double, bool, list, tuple, dict" in text
    # ToolConfigError is a ValueError too, for code that catches the builtin.
    assert isinstance(err.value, ValueError)


def test_non_string_types_and_foreign_classes_are_refused():
    with pytest.raises(ToolConfigError, match=r"ToolParameter 'n' type must be a string .* got 3"):
        ToolParameter("n", 3)
    with pytest.raises(ToolConfigError, match=r"'n' has type \"bytes\".*use type \"string\""):
        ToolParameter("n", bytes)


def test_setting_type_is_checked_too():
    p = ToolParameter("flag", "string")
    p.type = "Bool"
    assert p.type == "boolean"
    with pytest.raises(ToolConfigError, match="'flag' has type \"enum\""):
        p.type = "enum"
    assert p.type == "boolean", "a refused value leaves the parameter as it was"


def test_mapped_types_register_and_any_has_no_type_constraint():
    reg = ToolRegistry()
    params = [
        ToolParameter("city", "String", "where"),
        ToolParameter("days", "int", "how many"),
        ToolParameter("extra", "any", "anything", required=False),
    ]
    reg.register_function(lambda p: "ok", "forecast", "Weather forecast", params)
    props = reg.get_schema("forecast")["properties"]
    assert props["city"] == {"type": "string", "description": "where"}
    assert props["days"] == {"type": "integer", "description": "how many"}
    assert props["extra"] == {"description": "anything"}
    assert reg.execute_tool("forecast", {"city": "Oslo", "days": 2, "extra": [1, {"a": None}]}).text == "ok"
    assert reg.execute_tool("forecast", {"city": "Oslo", "days": "two"}).is_error


def test_pickle_round_trip_keeps_the_stored_word():
    p = ToolParameter("n", "Integer", "count", required=False, default=3)
    q = pickle.loads(pickle.dumps(p))
    assert q == p and q.type == "integer"
