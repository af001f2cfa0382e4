"""The registry against what a broken model sends. Model input (names, arguments) never raises: it
becomes an error ToolResponse. Arguments are validated by their JSON value: subclasses of
dict/list/str/int/float (IntEnum, str enums, OrderedDict) validate as their base type and the tool
receives the very objects the caller passed; tuples are arrays; ``True`` is not an integer; ``1.0``
and ``-0.0`` are integers (JSON Schema 2020-12) and reach the tool as floats. Schemas that cannot
compile are refused at registration.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import types

import pytest
from agentmaker import (
    Tool,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
)
from hostile_tools import Echo, Seen, make

# the name and the argument container -----------------------------------------------------------


@pytest.mark.parametrize(
    "name, kind", [(5, "int"), (None, "NoneType"), (b"echo", "bytes"), (["echo"], "list")]
)
def test_a_tool_name_that_is_not_a_str_is_an_error_response(name, kind):
    reg = make(Echo())
    expected = ToolResponse.error(f"Error: the tool name must be a string, got {kind}")
    assert reg.execute_tool(name, {"text": "x"}) == expected
    assert reg.validate(name, {"text": "x"}) == expected
    assert asyncio.run(reg.aexecute_tool(name, {"text": "x"})) == expected
    assert reg._lookup(name) is None


def test_a_name_with_a_lone_surrogate_is_an_unknown_tool_not_an_exception():
    # json.loads('"\\ud800"') produces exactly this string; it cannot be encoded as UTF-8.
    reg = make(Echo())
    for call in (reg.execute_tool, reg.validate):
        resp = call("\ud800calc", {})
        assert resp.is_error
        assert resp.text.startswith("Error: tool '") and resp.text.endswith(
            "calc' does not exist. Available tools: echo."
        )
    assert asyncio.run(reg.aexecute_tool("\ud800", {})).is_error
    assert reg._lookup("\ud800") is None
    assert "\ud800" not in reg


def test_a_str_subclass_name_finds_the_tool():
    class Name(str):
        def __eq__(self, other):
            return False

        __hash__ = str.__hash__

    assert make(Echo()).execute_tool(Name("echo"), {"text": "hi"}).text == "hi"


@pytest.mark.parametrize(
    "params, fragment",
    [
        (types.MappingProxyType({"text": "a"}), "Error: arguments for tool 'echo' must be a JSON object"),
        ((("text", "a"),), "Error: arguments for tool 'echo' must be a JSON object"),
        ({"text": "a", 1: "x"}, "a dict key of type int (JSON object keys are strings)"),
        ({"text": "a", ("k",): 1}, "a dict key of type tuple"),
        ({"\ud800": "a"}, "a key that is not valid UTF-8"),
        ({"text": "\udfff"}, "a string that is not valid UTF-8 (lone surrogate) at 'text'"),
        ({"text": b"a"}, "a value of type bytes (not JSON) at 'text'"),
        ({"text": "a", "z": {"deep": [1, {2}]}}, "a value of type set (not JSON) at 'z.deep.1'"),
        ({"text": "a", "z": float("-inf")}, "the float -inf (NaN and infinity are not JSON) at 'z'"),
        (
            {"text": "a", "times": 2**64},
            "an integer outside the 64-bit range JSON tools can exchange at 'times'",
        ),
        ({"text": "a", "times": -(2**63) - 1}, "outside the 64-bit range"),
    ],
)
def test_arguments_that_are_not_json_are_error_responses(params, fragment):
    reg = make(Echo())
    resp = reg.execute_tool("echo", params)
    assert resp.is_error
    assert fragment in resp.text
    assert asyncio.run(reg.aexecute_tool("echo", params)) == resp


# numbers, booleans and subclasses ---------------------------------------------------------------


def test_bool_is_not_an_integer_but_integral_floats_are():
    tool = Seen()
    reg = make(tool)
    assert reg.execute_tool("seen", {"n": True}).text == (
        "Error: tool 'seen' failed parameter validation: parameter 'n': true is not of type \"integer\""
    )
    assert reg.execute_tool("seen", {"x": False}).text == (
        "Error: tool 'seen' failed parameter validation: parameter 'x': false is not of type \"number\""
    )
    assert '1.5 is not of type "integer"' in reg.execute_tool("seen", {"n": 1.5}).text
    # JSON Schema 2020-12: a number with a zero fractional part is an integer. The tool gets the
    # float the caller sent (the reference behaves the same; @tool functions convert).
    for value in (1.0, -0.0):
        assert reg.execute_tool("seen", {"n": value}) == ToolResponse.ok("ok")
        assert type(tool.calls[-1]["n"]) is float and tool.calls[-1]["n"] == value
    assert str(tool.calls[-1]["n"]) == "-0.0"


def test_64_bit_boundaries():
    tool = Seen()
    reg = make(tool)
    for value in (2**63 - 1, 2**63, 2**64 - 1, -(2**63)):
        assert reg.execute_tool("seen", {"n": value}) == ToolResponse.ok("ok"), value
        assert tool.calls[-1]["n"] == value
    assert "outside the 64-bit range" in reg.execute_tool("seen", {"n": 2**64}).text
    assert reg.execute_tool("seen", {"x": 1e308}) == ToolResponse.ok("ok")
    assert "NaN and infinity" in reg.execute_tool("seen", {"x": 1e308 * 10}).text


def test_subclasses_validate_as_their_base_json_type_and_reach_the_tool_unchanged():
    class Level(enum.IntEnum):
        HIGH = 3

    class Mode(str, enum.Enum):
        READ = "read"
        DELETE = "delete"

    class Num(float):
        pass

    class Args(dict):
        pass

    tool = Seen()
    reg = make(tool)
    args = Args(n=Level.HIGH, x=Num(2.5), mode=Mode.READ, items=(1, 2, Level.HIGH))
    assert reg.execute_tool("seen", args) == ToolResponse.ok("ok")
    got = tool.calls[-1]
    assert got is args
    assert got["n"] is Level.HIGH and got["mode"] is Mode.READ and type(got["items"]) is tuple
    # Validation reads the value, not the Python spelling: Mode.DELETE is "delete".
    resp = reg.execute_tool("seen", {"mode": Mode.DELETE})
    assert resp.text.startswith(
        "Error: tool 'seen' failed parameter validation: parameter 'mode': \"delete\" is not one of"
    )
    assert (
        'parameter \'items.1\': "b" is not of type "integer"'
        in reg.execute_tool("seen", {"items": (1, "b")}).text
    )
    assert reg.execute_tool("seen", collections.OrderedDict(n=1)) == ToolResponse.ok("ok")


def test_overridden_python_methods_do_not_fool_validation():
    class Sly(str):
        def __str__(self):
            return "read"

        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    class Liar(dict):
        def items(self):
            return [("n", 1)]

        def keys(self):
            return ["n"]

        def __getitem__(self, key):
            return 1

    reg = make(Seen())
    assert '"delete" is not one of' in reg.execute_tool("seen", {"mode": Sly("delete")}).text
    assert '"x" is not of type "integer"' in reg.execute_tool("seen", Liar(n="x")).text


# size and depth --------------------------------------------------------------------------------


def test_huge_valid_arguments_pass_through_intact():
    big = {f"k{i}": i for i in range(100_000)}
    big["text"] = "y" * 10_000_000
    resp = make(Echo()).execute_tool("echo", big)
    assert resp.status == "success"
    assert resp.data is big and len(resp.text) == 10_000_000


def test_huge_invalid_arguments_give_a_bounded_report():
    class Strict(Seen):
        def get_input_schema(self):
            return {"type": "object", "additionalProperties": {"type": "integer"}}

    reg = make(Strict("strict"))
    resp = reg.execute_tool("strict", {f"k{i}": "not an int" for i in range(100_000)})
    assert resp.text.startswith("Error: tool 'strict' failed parameter validation: parameter 'k")
    assert resp.text.count("parameter '") == 20
    resp = make(Echo()).execute_tool("echo", {"text": 5, "times": "y" * 10_000_000})
    assert resp.is_error and "parameter 'text': 5 is not of type \"string\"" in resp.text
    assert len(resp.text) < 1_000
    resp = make(Echo()).execute_tool("y" * 10_000_000, {})
    assert resp.text == f"Error: tool '{'y' * 64}…' does not exist. Available tools: echo."


def test_nesting_is_bounded_and_cycles_do_not_recurse_forever():
    reg = make(Echo())

    def nested(depth):
        root = cur = []
        for _ in range(depth):
            nxt = []
            cur.append(nxt)
            cur = nxt
        return root

    assert reg.execute_tool("echo", {"text": "a", "z": nested(100)}).status == "success"
    resp = reg.execute_tool("echo", {"text": "a", "z": nested(100_000)})
    assert (
        resp.is_error and "the arguments are not JSON: nesting deeper than 128 levels at 'z.0.0" in resp.text
    )
    loop = []
    loop.append(loop)
    cyclic = {"text": "a"}
    cyclic["self"] = cyclic
    assert (
        "nesting deeper than 128 levels at 'z.0.0.0"
        in reg.execute_tool("echo", {"text": "a", "z": loop}).text
    )
    assert "nesting deeper than 128 levels at 'self.self" in reg.execute_tool("echo", cyclic).text


class Schema(Tool):
    def __init__(self, name, schema):
        super().__init__(name, "Has a hand-written root schema.")
        self.schema = schema

    def get_input_schema(self):
        return self.schema

    def run(self, parameters):
        return "ran"


def test_schemas_that_cannot_compile_are_refused_at_registration():
    # Schemas with references or regexes are compiled at registration (the meta-schema check
    # alone cannot tell whether a $ref resolves or a pattern parses), so these fail loud there.
    reg = ToolRegistry()
    cases = [
        (
            Schema("bad_ref", {"type": "object", "properties": {"s": {"$ref": "#/nope"}}}),
            "Pointer '/nope' does not exist",
        ),
        (
            Schema(
                "remote_ref", {"type": "object", "properties": {"s": {"$ref": "http://127.0.0.1:9/s.json"}}}
            ),
            "Resource 'http://127.0.0.1:9/s.json'",
        ),
        (
            Schema(
                "bad_regex",
                {"type": "object", "properties": {"s": {"type": "string", "pattern": "(unclosed"}}},
            ),
            '"(unclosed" is not a "regex"',
        ),
        (
            Schema("bad_type", {"type": "object", "properties": {"s": {"type": "nonsense"}}}),
            "is not a valid JSON Schema",
        ),
        # The validator only knows the drafts it ships (asking it about another one panicked).
        *(
            (
                Schema("meta", {"type": "object", "$schema": uri}),
                f'its "$schema" "{uri}" names no JSON Schema draft supported here',
            )
            for uri in ("http://evil.example/meta.json", "#", "http://json-schema.org/draft-03/schema#")
        ),
    ]
    for schema_tool, fragment in cases:
        with pytest.raises(ToolRegistrationError, match="unusable input schema") as info:
            reg.register(schema_tool)
        assert fragment in str(info.value)
    assert len(reg) == 0


def test_schemas_naming_a_known_draft_register():
    reg = ToolRegistry()
    for i, uri in enumerate(
        (
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2020-12/schema",
        )
    ):
        reg.register(Schema(f"s{i}", {"type": "object", "$schema": uri}))
    assert reg.execute_tool("s1", {}).text == "ran"


def test_a_backtracking_pattern_does_not_hang_validation():
    reg = make(
        Schema("redos", {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}})
    )
    assert reg.execute_tool("redos", {"s": "a" * 40}).text == "ran"
    assert reg.execute_tool("redos", {"s": "a" * 40 + "!"}).text == (
        "Error: tool 'redos' failed parameter validation: parameter 's': "
        f'"{"a" * 40}!" does not match "^(a+)+$"'
    )
