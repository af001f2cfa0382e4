"""The registry and the core types against hostile input: what a broken model, a careless tool
author or a concurrent program can throw at them. Every test pins the observable outcome (a
value, an error text, an exception type), including the behaviours chosen on purpose:

- model input (names, arguments) never raises: it becomes an error ToolResponse;
- programmer mistakes (wrong argument types to the API, broken tool classes) raise;
- arguments are validated by their JSON value: subclasses of dict/list/str/int/float (IntEnum,
  str enums, OrderedDict) validate as their base type and the tool receives the very objects
  the caller passed; tuples are arrays; ``True`` is not an integer; ``1.0`` and ``-0.0`` are
  integers (JSON Schema 2020-12) and reach the tool as floats;
- ``run`` receives the caller's own dict (no copy), as in the reference;
- a tool is keyed by the name it had when registered; renaming the object later does not move it;
- Tool and ToolRegistry objects cannot be pickled or copied (TypeError): they hold live code and,
  for built-ins, Rust state; ToolResponse and ToolParameter are values and round-trip.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import enum
import gc
import pickle
import threading
import types
import weakref

import pytest
from agentmaker import (
    CalculatorTool,
    Tool,
    ToolParameter,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
    tool,
)

ECHO_PARAMETERS = (
    ToolParameter("text", "string", "Text to echo."),
    ToolParameter("times", "integer", "Repetitions.", required=False, default=1),
)


class Echo(Tool):
    """Answers with ``text``; ``data`` is the very parameters object it received."""

    def __init__(self, name="echo", description="Echo text back."):
        super().__init__(name, description)

    def get_parameters(self):
        return list(ECHO_PARAMETERS)

    def run(self, parameters):
        return ToolResponse.ok(parameters["text"], data=parameters)


class Seen(Tool):
    """Records the parameters object it was called with."""

    def __init__(self, name="seen", params=None):
        super().__init__(name, "Records its arguments.")
        self.params = params or [
            ToolParameter("n", "integer", "", required=False),
            ToolParameter("x", "number", "", required=False),
            ToolParameter("s", "string", "", required=False),
            ToolParameter(
                "mode", "string", "", required=False, schema={"type": "string", "enum": ["read", "append"]}
            ),
            ToolParameter(
                "items", "array", "", required=False, schema={"type": "array", "items": {"type": "integer"}}
            ),
        ]
        self.calls = []

    def get_parameters(self):
        return self.params

    def run(self, parameters):
        self.calls.append(parameters)
        return "ok"


def make(*tools):
    reg = ToolRegistry()
    for t in tools:
        reg.register(t)
    return reg


def run_threads(targets):
    """Starts every target on a daemon thread and joins them; a thread still alive after the
    join is a deadlock (the bound only detects a hang, it measures no speed)."""
    errors = []

    def guard(fn):
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=guard, args=(fn,), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [t.is_alive() for t in threads] == [False] * len(threads), "deadlock: threads still running"
    assert errors == []


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


# API misuse by the programmer raises ------------------------------------------------------------


def test_wrong_argument_types_to_the_api_raise():
    reg = make(Echo())
    with pytest.raises(TypeError, match="'int' object is not an instance of 'str'"):
        reg.register_all([Echo("b")], on_conflict=5)
    with pytest.raises(
        ToolRegistrationError, match='on_conflict must be "raise", "skip" or "overwrite", got "RAISE"'
    ):
        reg.register_all([Echo("b")], on_conflict="RAISE")
    with pytest.raises(TypeError, match="'str' object is not an instance of 'bool'"):
        reg.register(Echo("b"), overwrite="yes")
    for render in (reg.to_openai_schema, reg.get_tools_description, reg.get_catalog):
        with pytest.raises(TypeError, match="names must contain only str"):
            render([1, 2])
        with pytest.raises(TypeError, match="names must contain only str"):
            render(b"echo")
        with pytest.raises(TypeError, match="not a single str"):
            render("echo")
    assert reg.get_catalog(n for n in ["echo"]) == "- echo: Echo text back."
    with pytest.raises(TypeError):
        reg.unregister(5)
    with pytest.raises(
        ToolRegistrationError, match=r"got type; to register a plain function use register_callable"
    ):
        reg.register(Echo)  # the class, not an instance
    assert reg.names() == ["echo"]


def test_tool_attributes_keep_their_types():
    tool = Echo()
    with pytest.raises(TypeError, match="'int' object is not an instance of 'str'"):
        tool.name = 5
    with pytest.raises(AttributeError):
        tool.origin = "mcp:x"
    with pytest.raises(TypeError, match="ToolResponse text must be a str, got int"):
        ToolResponse(5)
    with pytest.raises(ValueError, match="status must be 'success', 'partial' or 'error', got \"ok\""):
        ToolResponse("a", "ok")
    with pytest.raises(TypeError, match="schema must be a dict"):
        ToolParameter("a", "string", schema=[1])


def test_tool_response_is_not_subclassable():
    with pytest.raises(TypeError, match="not an acceptable base type"):

        class MyResponse(ToolResponse):  # the class statement is what fails
            pass


# hostile tool definitions ---------------------------------------------------------------------


def test_get_parameters_that_raises_propagates_and_changes_nothing():
    class Broken(Echo):
        def get_parameters(self):
            raise ValueError("parameters unavailable")

    reg = make(Echo("a"))
    with pytest.raises(ValueError, match="parameters unavailable"):
        reg.register(Broken("b"))
    with pytest.raises(ValueError, match="parameters unavailable"):
        reg.register_all([Echo("c"), Broken("b")], on_conflict="overwrite")
    assert reg.names() == ["a"]


def test_get_parameters_may_return_any_iterable_of_parameters():
    class Gen(Echo):
        def get_parameters(self):
            return (ToolParameter(n, "string", n.upper()) for n in "ab")

    class Mapping(Echo):
        def get_parameters(self):
            return {"a": ToolParameter("a", "string", "")}

    class Nothing(Echo):
        def get_parameters(self):
            return None

    reg = make(Gen("gen"))
    assert reg.get_schema("gen")["required"] == ["a", "b"]
    with pytest.raises(
        ToolRegistrationError,
        match="get_parameters\\(\\) of tool 'm' returned a str; every item must be a ToolParameter",
    ):
        reg.register(Mapping("m"))
    with pytest.raises(
        ToolRegistrationError, match="get_parameters\\(\\) of tool 'n' must return a list of ToolParameter"
    ):
        reg.register(Nothing("n"))


def test_the_schema_is_a_snapshot_taken_at_registration():
    tool = Seen("snap", [ToolParameter("n", "integer", "")])
    reg = make(tool)
    tool.params.append(ToolParameter("late", "string", ""))
    tool.params[0].type = "string"
    assert reg.get_schema("snap")["properties"] == {"n": {"type": "integer", "description": ""}}
    assert reg.execute_tool("snap", {"n": "x"}).is_error
    reg.register(tool, overwrite=True)  # re-registering takes a new snapshot
    assert reg.get_schema("snap")["required"] == ["n", "late"]


def test_flag_properties_that_raise_propagate():
    class BadFlag(Echo):
        @property
        def requires_confirmation(self):
            raise RuntimeError("flag broken")

    reg = ToolRegistry()
    with pytest.raises(RuntimeError, match="flag broken"):
        reg.register(BadFlag("bad"))
    assert len(reg) == 0


def test_forged_origin_of_another_type_is_shown_in_the_message():
    class Forger(Echo):
        origin = 5

    with pytest.raises(
        ToolRegistrationError, match='overrides origin with "5"; origin is stamped by the framework'
    ):
        ToolRegistry().register(Forger("f"))


def test_run_gets_the_callers_dict_and_may_mutate_it():
    class Mutator(Echo):
        def run(self, parameters):
            parameters["text"] = 123
            parameters["extra"] = {1, 2}
            return "mutated"

    reg = make(Mutator("mut"))
    args = {"text": "a"}
    assert reg.execute_tool("mut", args) == ToolResponse.ok("mutated")
    assert args == {"text": 123, "extra": {1, 2}}
    # the next call with the mutated dict is validated again
    assert "the arguments are not JSON" in reg.execute_tool("mut", args).text


def test_a_tool_renamed_after_registration_stays_under_its_registered_name():
    tool = Echo("orig")
    reg = make(tool)
    tool.name = "renamed"
    assert reg.execute_tool("orig", {"text": "x"}).text == "x"
    assert (
        reg.execute_tool("renamed", {"text": "x"}).text
        == "Error: tool 'renamed' does not exist. Available tools: orig."
    )
    assert reg.get("orig") is tool and "renamed" not in reg
    assert reg.to_openai_schema()[0]["function"]["name"] == "orig"
    reg.register(tool)  # the same object under its new name: two entries
    assert reg.names() == ["orig", "renamed"]
    assert reg.unregister("orig") is tool
    assert reg.names() == ["renamed"]


def test_results_that_are_not_responses():
    class Duck:
        text = "looks like a response"
        status = "success"
        data = None

    class Text(str):
        pass

    class Returns(Echo):
        def __init__(self, name, value):
            super().__init__(name)
            self.value = value

        def run(self, parameters):
            return self.value

    reg = make(
        Returns("duck", Duck()),
        Returns("sub", Text("sub text")),
        Returns("none", None),
        Returns("bytes", b"x"),
    )
    for run in (reg.execute_tool, lambda n, p: asyncio.run(reg.aexecute_tool(n, p))):
        assert run("duck", {"text": "x"}).text == (
            "Error: tool 'duck' returned a Duck instead of a ToolResponse (or str); this is a bug in the tool"
        )
        assert run("sub", {"text": "x"}) == ToolResponse.ok("sub text")
        assert "returned a NoneType instead" in run("none", {"text": "x"}).text
        assert "returned a bytes instead" in run("bytes", {"text": "x"}).text


class Raises(Echo):
    def __init__(self, name, exc):
        super().__init__(name)
        self.exc = exc

    def run(self, parameters):
        raise self.exc


def test_exceptions_with_a_broken_str_still_become_error_responses():
    class StrRaises(Exception):
        def __str__(self):
            raise RuntimeError("str is broken")

    class StrNotStr(Exception):
        def __str__(self):
            return 42  # noqa: PLE0307 - the point of the test

    reg = make(Raises("a", StrRaises()), Raises("b", StrNotStr("x")), Raises("c", ValueError()))
    assert reg.execute_tool("a", {"text": "x"}).text == "Error: tool 'a' raised during execution: StrRaises"
    assert reg.execute_tool("b", {"text": "x"}).text == "Error: tool 'b' raised during execution: StrNotStr"
    assert reg.execute_tool("c", {"text": "x"}).text == "Error: tool 'c' raised during execution: ValueError"
    assert (
        asyncio.run(reg.aexecute_tool("a", {"text": "x"})).text
        == "Error: tool 'a' raised during execution: StrRaises"
    )


def test_stop_iteration_from_a_sync_tool_does_not_hang_the_async_path():
    # asyncio cannot carry StopIteration through a Future; arun converts it like PEP 479 does.
    reg = make(Raises("stop", StopIteration("exhausted")))
    assert (
        reg.execute_tool("stop", {"text": "x"}).text
        == "Error: tool 'stop' raised during execution: StopIteration: exhausted"
    )
    resp = asyncio.run(reg.aexecute_tool("stop", {"text": "x"}))
    assert (
        resp.text
        == "Error: tool 'stop' raised during execution: RuntimeError: run() raised StopIteration: exhausted"
    )

    async def direct():
        with pytest.raises(RuntimeError, match="run\\(\\) raised StopIteration") as info:
            await reg.get("stop").arun({"text": "x"})
        return info.value.__cause__

    assert isinstance(asyncio.run(direct()), StopIteration)


def test_stop_iteration_from_a_sync_tool_function_does_not_hang_the_async_path():
    @tool
    def exhausted(n: int) -> int:
        """Raises what next() raises on an empty iterator."""
        raise StopIteration(n)

    reg = make(exhausted)
    assert (
        reg.execute_tool("exhausted", {"n": 7}).text
        == "Error: tool 'exhausted' raised during execution: StopIteration: 7"
    )
    resp = asyncio.run(reg.aexecute_tool("exhausted", {"n": 7}))
    assert resp.text == (
        "Error: tool 'exhausted' raised during execution: RuntimeError: the function raised StopIteration: 7"
    )


def test_system_exit_propagates_on_both_paths():
    reg = make(Raises("exit", SystemExit(3)))
    with pytest.raises(SystemExit):
        reg.execute_tool("exit", {"text": "x"})
    with pytest.raises(SystemExit):
        asyncio.run(reg.aexecute_tool("exit", {"text": "x"}))


# re-entrancy and threads ----------------------------------------------------------------------


def test_a_tool_may_use_the_registry_from_run():
    reg = ToolRegistry()

    class Reenter(Tool):
        def __init__(self):
            super().__init__("reenter", "Uses the registry that runs it.")

        def get_parameters(self):
            return []

        def run(self, parameters):
            reg.register(Echo("inner"), overwrite=True)
            inner = reg.execute_tool("inner", {"text": "hi"})
            schemas = reg.to_openai_schema()
            nested = reg.execute_tool("reenter_probe", {})
            reg.unregister("inner")
            reg.unregister("reenter")
            return f"{inner.text} {len(schemas)} {nested.is_error} {reg.names()}"

    reg.register(Reenter())
    assert reg.execute_tool("reenter", {}).text == "hi 2 True []"
    reg.register(Reenter())
    assert asyncio.run(reg.aexecute_tool("reenter", {})).text == "hi 2 True []"


def test_finalizers_of_replaced_tools_may_use_the_registry():
    reg = ToolRegistry()
    seen = []

    class Noticing(Echo):
        def __del__(self):
            seen.append((self.name, reg.names(), len(reg.to_openai_schema())))

    reg.register(Noticing("a"))
    reg.register(Echo("a"), overwrite=True)  # the only reference to the old tool goes away
    reg.register_all([Noticing("b")])
    reg.register_all([Echo("b")], on_conflict="overwrite")
    reg.register(Noticing("c"))
    reg.unregister("c")
    gc.collect()
    assert seen == [("a", ["a"], 1), ("b", ["a", "b"], 2), ("c", ["a", "b"], 2)]


def test_concurrent_execution_while_tools_come_and_go():
    reg = make(Echo())
    reg.register_all([Echo(f"fixed_{i}") for i in range(20)])
    counts = [0] * 8

    def worker(i):
        for _ in range(150):
            assert reg.execute_tool("echo", {"text": str(i)}).text == str(i)
            churn = reg.execute_tool("churn", {"text": "c"})
            assert churn.text == "c" or churn.text.startswith("Error: tool 'churn' does not exist.")
            assert "failed parameter validation" in reg.execute_tool("echo", {"text": i}).text
            names = [t["function"]["name"] for t in reg.to_openai_schema()]
            assert names[:21] == ["echo"] + [f"fixed_{k}" for k in range(20)]
            assert reg.get_tools_description().startswith("- echo: Echo text back.")
            counts[i] += 1

    def churner():
        for round_ in range(150):
            reg.register(Echo("churn", f"round {round_}"), overwrite=True)
            reg.to_openai_schema()
            reg.unregister("churn")
            reg.register_all([Echo(f"batch_{j}") for j in range(5)], on_conflict="overwrite")
            reg.get_catalog()
            for j in range(5):
                reg.unregister(f"batch_{j}")

    run_threads([lambda i=i: worker(i) for i in range(8)] + [churner])
    assert counts == [150] * 8
    assert reg.names() == ["echo"] + [f"fixed_{i}" for i in range(20)]
    assert [t["function"]["name"] for t in reg.to_openai_schema()] == reg.names()


def test_concurrent_async_execution_on_worker_threads():
    reg = make(Echo(), Seen())

    async def many(i):
        results = await asyncio.gather(*(reg.aexecute_tool("echo", {"text": f"{i}-{k}"}) for k in range(30)))
        return [r.text for r in results]

    outcomes = {}

    def loop_in_thread(i):
        outcomes[i] = asyncio.run(many(i))

    run_threads([lambda i=i: loop_in_thread(i) for i in range(4)])
    assert outcomes == {i: [f"{i}-{k}" for k in range(30)] for i in range(4)}


# lifetime and garbage collection --------------------------------------------------------------


def test_cycles_through_tools_and_callables_are_collected():
    def build():
        reg = ToolRegistry()

        def lookup(key: str) -> str:
            """Reads the registry that holds this function."""
            return str(key in reg)

        reg.register_callable(lookup)  # registry -> tool -> function -> closure cell -> registry
        tool = Echo()
        tool.registry = reg
        reg.register(tool)
        reg.self_ref = reg  # the Python subclass has a __dict__
        assert reg.execute_tool("lookup", {"key": "echo"}).text == "True"
        return [weakref.ref(reg), weakref.ref(tool), weakref.ref(lookup)]

    refs = build()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_unregistered_tools_are_released():
    reg = make(Echo("a"))
    ref = weakref.ref(reg.get("a"))
    reg.to_openai_schema()
    reg.unregister("a")
    gc.collect()
    assert ref() is None


def test_tools_are_released_after_every_rendering():
    reg = make(Echo("a"), Echo("b"))
    ref = weakref.ref(reg.get("a"))
    kept = [
        reg.to_openai_schema(strict=True),
        reg.to_anthropic_schema(),
        reg.to_gemini_schema(["a"]),
        reg.strict_fallbacks(),
        reg.get_tools_description(),
        reg.get_catalog(),
    ]
    reg.unregister("a")
    gc.collect()
    assert ref() is None
    assert [t["name"] for t in reg.to_anthropic_schema()] == ["b"]
    assert kept[1][0]["name"] == "a"  # what was handed out stays valid


# subclassing, pickling, copying ----------------------------------------------------------------


def test_a_python_subclass_of_the_registry():
    class Audited(ToolRegistry):
        def __init__(self, tools, label):
            super().__init__()
            self.label = label
            self.log = []
            self.register_all(tools)

        def execute_tool(self, name, parameters):
            self.log.append(name)
            return super().execute_tool(name, parameters)

    reg = Audited([Echo()], label="audit")
    assert isinstance(reg, ToolRegistry) and reg.label == "audit"
    assert reg.execute_tool("echo", {"text": "hi"}).text == "hi"
    assert reg.execute_tool("nope", {}).is_error
    assert reg.log == ["echo", "nope"]
    assert asyncio.run(reg.aexecute_tool("echo", {"text": "async"})).text == "async"
    assert reg.to_openai_schema()[0]["function"]["name"] == "echo"
    assert ToolRegistry("ignored", extra=1).names() == []


@pytest.mark.parametrize(
    "make_obj, cls_name",
    [
        (lambda: make(Echo()), "ToolRegistry"),
        (lambda: Echo(), "Echo"),
        (CalculatorTool, "agentmaker.CalculatorTool"),
    ],
)
def test_tools_and_registries_refuse_pickle_and_copy(make_obj, cls_name):
    obj = make_obj()
    for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match=f"cannot pickle '{cls_name}' object"):
            attempt(obj)


def test_responses_and_parameters_round_trip_through_pickle_and_copy():
    resp = ToolResponse.partial("cut", data={"rows": [1, 2]})
    assert pickle.loads(pickle.dumps(resp)) == resp
    assert (
        repr(pickle.loads(pickle.dumps(ToolResponse.error("e"))))
        == "ToolResponse(text='e', status='error', data=None)"
    )
    shallow, deep = copy.copy(resp), copy.deepcopy(resp)
    assert shallow == resp and shallow is not resp and shallow.data is resp.data
    assert deep == resp and deep.data is not resp.data
    param = ToolParameter("mode", "string", "Mode", required=False, default="read", schema={"enum": ["read"]})
    assert pickle.loads(pickle.dumps(param)) == param
    assert copy.deepcopy(param) == param and copy.deepcopy(param).schema is not param.schema
    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        pickle.dumps(ToolResponse.ok("x", data=lambda: 1))


# async cancellation ---------------------------------------------------------------------------


def test_cancelling_aexecute_tool_cancels_an_async_tool():
    log = []

    class Slow(Tool):
        def __init__(self):
            super().__init__("slow", "Waits until cancelled.")

        def get_parameters(self):
            return []

        async def arun(self, parameters):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                log.append("cancelled")
                raise
            return "never"

    reg = make(Slow(), Echo())

    async def main():
        task = asyncio.create_task(reg.aexecute_tool("slow", {}))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reg.aexecute_tool("slow", {}), 0.01)
        return await reg.aexecute_tool("echo", {"text": "still fine"})

    assert asyncio.run(main()).text == "still fine"
    assert log == ["cancelled", "cancelled"]


def test_cancelling_aexecute_tool_of_a_sync_tool_leaves_the_worker_to_finish():
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    class Blocking(Echo):
        def run(self, parameters):
            started.set()
            release.wait(30)
            finished.set()
            return "finished"

    reg = make(Blocking("blocking"))

    async def main():
        task = asyncio.create_task(reg.aexecute_tool("blocking", {"text": "x"}))
        await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        cancelled_before_finish = not finished.is_set()
        release.set()
        await asyncio.to_thread(finished.wait, 30)
        return cancelled_before_finish

    assert asyncio.run(main()) is True
    assert finished.is_set()
    release.clear()
    release.set()
    assert reg.execute_tool("blocking", {"text": "x"}).text == "finished"
