"""ToolRegistry: registration, renderings and execution through the Rust core."""

from __future__ import annotations

import asyncio

import pytest
from agentmaker import AgentRunFlow, Tool, ToolParameter, ToolRegistrationError, ToolRegistry, ToolResponse


class Echo(Tool):
    def __init__(self, name="echo", description="Echo text back."):
        super().__init__(name, description)

    def get_parameters(self):
        return [
            ToolParameter("text", "string", "Text to echo."),
            ToolParameter("times", "integer", "Repetitions.", required=False, default=1),
        ]

    def run(self, parameters):
        return ToolResponse.ok(parameters["text"] * parameters.get("times", 1), data=parameters)


class Nested(Tool):
    def __init__(self):
        super().__init__("nested", "Takes nested items.")

    def get_parameters(self):
        item = {
            "type": "object",
            "properties": {"n": {"type": "string"}, "qty": {"type": "integer"}},
            "required": ["n"],
        }
        return [
            ToolParameter("items", "array", "Items", schema={"type": "array", "items": item}),
            ToolParameter("mode", "string", "Mode", schema={"type": "string", "enum": ["read", "append"]}),
        ]

    def run(self, parameters):
        return "ok"


def make(*tools):
    reg = ToolRegistry()
    for t in tools:
        reg.register(t)
    return reg


# registration --------------------------------------------------------------------------------


def test_register_get_names_contains_len():
    reg = make(Echo("b"), Echo("a"))
    assert reg.names() == ["b", "a"]
    assert "a" in reg and "zzz" not in reg and 5 not in reg
    assert len(reg) == 2
    assert reg.get("a").name == "a"
    assert reg.get("missing") is None
    assert [t.name for t in reg.list_tools()] == ["b", "a"]


def test_duplicate_raises_and_overwrite_keeps_position():
    reg = make(Echo("a"), Echo("b"))
    first = reg.get("a")
    with pytest.raises(ToolRegistrationError, match="'a' is already registered; pass overwrite=True"):
        reg.register(Echo("a"))
    assert reg.get("a") is first
    replacement = Echo("a", "new description")
    reg.register(replacement, overwrite=True)
    assert reg.names() == ["a", "b"]
    assert reg.get("a") is replacement
    assert reg.get_catalog() == "- a: new description\n- b: Echo text back."


@pytest.mark.parametrize("bad", ["calc\n", "a b", "bell\x07", "x" * 129])
def test_illegal_names_are_refused(bad):
    reg = ToolRegistry(names="catalog")
    with pytest.raises(
        ToolRegistrationError, match=r"is not accepted: .*1 to 128 characters with no whitespace"
    ):
        reg.register(Echo(bad))
    assert len(reg) == 0


def test_empty_name_says_to_call_super_init():
    class Forgot(Tool):
        def __init__(self):
            pass

        def run(self, parameters):
            return "x"

    with pytest.raises(ToolRegistrationError, match=r"class .*Forgot has no name: call super\(\).__init__"):
        ToolRegistry().register(Forgot())


@pytest.mark.parametrize("thing", [5, "echo", None, lambda x: x, object()])
def test_registering_a_non_tool_is_a_clear_error(thing):
    reg = ToolRegistry()
    with pytest.raises(ToolRegistrationError, match="expected a Tool"):
        reg.register(thing)
    assert len(reg) == 0


def test_plain_function_gets_a_hint():
    def f(x: int) -> int:
        return x

    with pytest.raises(ToolRegistrationError, match="register_callable"):
        ToolRegistry().register(f)


def test_forged_origin_is_refused():
    class Forger(Echo):
        origin = "mcp:trusted"

    with pytest.raises(ToolRegistrationError, match="origin is stamped by the framework"):
        ToolRegistry().register(Forger("forger"))


def test_bad_parameter_lists_are_refused():
    class BadParams(Echo):
        def get_parameters(self):
            return ["text"]

    class Twice(Echo):
        def get_parameters(self):
            return [ToolParameter("a", "string", ""), ToolParameter("a", "integer", "")]

    class NotJsonDefault(Echo):
        def get_parameters(self):
            return [ToolParameter("a", "string", "", required=False, default={1, 2})]

    class BadType(Echo):
        def get_parameters(self):
            return [ToolParameter("a", "string", "", schema={"type": "nonsense-type"})]

    reg = ToolRegistry()
    with pytest.raises(ToolRegistrationError, match="every item must be a ToolParameter"):
        reg.register(BadParams())
    with pytest.raises(ToolRegistrationError, match="parameter 'a' is declared twice"):
        reg.register(Twice())
    with pytest.raises(ToolRegistrationError, match="default that is not JSON"):
        reg.register(NotJsonDefault())
    with pytest.raises(ToolRegistrationError, match="unusable input schema"):
        reg.register(BadType())
    assert len(reg) == 0


def test_register_all_modes():
    reg = make(Echo("a"))
    assert reg.register_all([Echo("b"), Echo("c")]) == ["b", "c"]
    assert reg.register_all([Echo("a"), Echo("d")], on_conflict="skip") == ["d"]
    keep = reg.get("a")
    new_a = Echo("a", "replaced")
    assert reg.register_all([new_a], on_conflict="overwrite") == ["a"]
    assert reg.get("a") is new_a and reg.get("a") is not keep
    assert reg.names() == ["a", "b", "c", "d"]


def test_register_all_that_raises_changes_nothing():
    reg = make(Echo("a"))
    before = (reg.names(), reg.to_openai_schema())
    with pytest.raises(ToolRegistrationError, match="'a' is already registered"):
        reg.register_all([Echo("x"), Echo("a")])
    with pytest.raises(ToolRegistrationError, match="not accepted"):
        reg.register_all([Echo("y"), Echo("bad name")], on_conflict="skip")
    with pytest.raises(ToolRegistrationError, match="expected a Tool"):
        reg.register_all([Echo("z"), 42], on_conflict="overwrite")
    with pytest.raises(ToolRegistrationError, match="already registered"):
        reg.register_all([Echo("w"), Echo("w")])
    with pytest.raises(
        ToolRegistrationError, match='on_conflict must be "raise", "skip" or "overwrite", got "merge"'
    ):
        reg.register_all([Echo("v")], on_conflict="merge")
    with pytest.raises(ToolRegistrationError, match="iterable"):
        reg.register_all(5)
    assert (reg.names(), reg.to_openai_schema()) == before


def test_unregister():
    reg = make(Echo("a"), Echo("b"), Echo("c"))
    removed = reg.unregister("b")
    assert removed.name == "b"
    assert reg.names() == ["a", "c"]
    with pytest.raises(KeyError, match="no tool named 'b' is registered"):
        reg.unregister("b")
    assert reg.execute_tool("b", {"text": "x"}).is_error
    assert [t["function"]["name"] for t in reg.to_openai_schema()] == ["a", "c"]


# renderings ----------------------------------------------------------------------------------


def test_openai_schema_format():
    reg = make(Echo())
    assert reg.to_openai_schema() == [
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": "Echo text back.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "description": "Text to echo."},
                        "times": {"type": "integer", "description": "Repetitions.", "default": 1},
                    },
                    "required": ["text"],
                },
            },
        }
    ]


def test_subset_rendering_order_dedupe_unknown():
    reg = make(Echo("a"), Echo("b"), Echo("c"))
    names = [t["function"]["name"] for t in reg.to_openai_schema(["c", "nope", "a", "c"])]
    assert names == ["c", "a"]
    assert reg.to_openai_schema([]) == []
    assert reg.get_tools_description(["b"]) == (
        "- b: Echo text back.\n"
        "    - text (string, required): Text to echo.\n"
        "    - times (integer, optional, default 1): Repetitions."
    )
    assert reg.get_tools_description([]) == "(no tools available)"
    with pytest.raises(TypeError, match="not a single str"):
        reg.to_openai_schema("a")


def test_catalog_and_description_of_empty_registry():
    reg = ToolRegistry()
    assert reg.get_catalog() == "(no tools available)"
    assert reg.get_tools_description() == "(no tools available)"
    assert reg.to_openai_schema() == []


def test_renderings_refresh_after_changes():
    reg = make(Echo("a"))
    assert len(reg.to_openai_schema()) == 1
    reg.register(Echo("b"))
    assert [t["function"]["name"] for t in reg.to_openai_schema()] == ["a", "b"]
    assert reg.get_catalog().endswith("- b: Echo text back.")
    reg.unregister("a")
    assert reg.get_tools_description().startswith("- b:")


def test_schema_param_is_rendered_and_validated_verbatim():
    reg = make(Nested())
    params = reg.to_openai_schema()[0]["function"]["parameters"]
    assert params["properties"]["mode"] == {"type": "string", "enum": ["read", "append"]}
    assert reg.get_schema("nested") == params
    assert reg.get_schema("missing") is None


# execution -----------------------------------------------------------------------------------


def test_execute_valid_call():
    reg = make(Echo())
    resp = reg.execute_tool("echo", {"text": "ab", "times": 2})
    assert resp == ToolResponse.ok("abab", data={"text": "ab", "times": 2})


def test_unknown_tool_is_an_error_response():
    reg = make(Echo("a"), Echo("b"))
    resp = reg.execute_tool("c", {})
    assert resp.status == "error"
    assert resp.text == "Error: tool 'c' does not exist. Available tools: a, b."


def test_unknown_tool_message_does_not_dump_hundreds_of_names():
    reg = ToolRegistry()
    reg.register_all([Echo(f"tool_{i}") for i in range(300)])
    resp = reg.execute_tool("tool_1000", {})
    assert resp.is_error
    assert "Closest names: tool_100" in resp.text and "300 tools are available" in resp.text
    assert len(resp.text) < 300


def test_invalid_arguments_name_each_path():
    reg = make(Nested(), Echo())
    resp = reg.execute_tool("nested", {"items": [{"n": "a"}, {"qty": "x"}], "mode": "delete"})
    assert resp.status == "error"
    assert resp.text.startswith("Error: tool 'nested' failed parameter validation: ")
    assert "parameter 'items.1.n': is required but missing" in resp.text
    assert 'parameter \'items.1.qty\': "x" is not of type "integer"' in resp.text
    assert "parameter 'mode':" in resp.text
    resp = reg.execute_tool("echo", {})
    assert (
        resp.text
        == "Error: tool 'echo' failed parameter validation: parameter 'text': is required but missing"
    )
    resp = reg.execute_tool("echo", {"text": None})
    assert "parameter 'text': null is not of type \"string\"" in resp.text
    resp = reg.execute_tool("echo", {"text": "a", "times": True})
    assert "parameter 'times'" in resp.text


@pytest.mark.parametrize(
    "params, fragment",
    [
        ([1, 2], "Error: arguments for tool 'echo' must be a JSON object"),
        ("text", "Error: arguments for tool 'echo' are not valid JSON"),
        (None, "Error: arguments for tool 'echo' must be a JSON object"),
        ({"text": {1, 2}}, "not JSON: a value of type set (not JSON) at 'text'"),
        ({"text": object()}, "a value of type object (not JSON) at 'text'"),
        ({"text": float("nan")}, "NaN and infinity are not JSON"),
        ({1: "x"}, "a dict key of type int"),
        ({"text": 10**30}, "outside the 64-bit range"),
    ],
)
def test_non_json_arguments_are_error_responses(params, fragment):
    reg = make(Echo())
    resp = reg.execute_tool("echo", params)
    assert resp.is_error
    assert fragment in resp.text


def test_deeply_nested_arguments_do_not_crash():
    deep = cur = {}
    for _ in range(10_000):
        cur["text"] = {}
        cur = cur["text"]
    resp = make(Echo()).execute_tool("echo", deep)
    assert resp.is_error and "nesting deeper than" in resp.text


def test_str_result_becomes_success_and_other_results_are_errors():
    class Plain(Echo):
        def run(self, parameters):
            return "plain"

    class Wrong(Echo):
        def run(self, parameters):
            return {"not": "a response"}

    reg = make(Plain("plain"), Wrong("wrong"))
    assert reg.execute_tool("plain", {"text": "x"}) == ToolResponse.ok("plain")
    resp = reg.execute_tool("wrong", {"text": "x"})
    assert resp.is_error
    assert "returned a dict instead of a ToolResponse" in resp.text


def test_exception_in_tool_becomes_error_response():
    class Boom(Echo):
        def run(self, parameters):
            raise KeyError("k")

    resp = make(Boom("boom")).execute_tool("boom", {"text": "x"})
    assert resp == ToolResponse.error("Error: tool 'boom' raised during execution: KeyError: 'k'")


def test_flow_control_and_base_exceptions_propagate():
    class Stop(AgentRunFlow):
        pass

    class Stopper(Echo):
        def run(self, parameters):
            raise Stop("done")

    class Interrupted(Echo):
        def run(self, parameters):
            raise KeyboardInterrupt

    reg = make(Stopper("stopper"), Interrupted("interrupted"))
    with pytest.raises(Stop):
        reg.execute_tool("stopper", {"text": "x"})
    with pytest.raises(KeyboardInterrupt):
        reg.execute_tool("interrupted", {"text": "x"})


def test_validate_without_running():
    calls = []

    class Counting(Echo):
        def run(self, parameters):
            calls.append(parameters)
            return "ran"

    reg = make(Counting())
    assert reg.validate("echo", {"text": "x"}) is None
    assert reg.validate("echo", {}).is_error
    assert reg.validate("nope", {}).is_error
    assert calls == []


def test_async_only_tool_on_sync_path_is_an_error_response():
    class OnlyAsync(Tool):
        def __init__(self):
            super().__init__("only_async", "async")

        async def arun(self, parameters):
            return ToolResponse.ok("async ran")

    reg = make(OnlyAsync())
    resp = reg.execute_tool("only_async", {})
    assert resp.is_error and "aexecute_tool" in resp.text
    assert asyncio.run(reg.aexecute_tool("only_async", {})) == ToolResponse.ok("async ran")


def test_aexecute_tool_is_lazy_without_a_loop_and_raises_where_awaited():
    calls = []

    class Counting(Echo):
        async def arun(self, parameters):
            calls.append(parameters)
            return "ran"

    class Broken(ToolRegistry):
        def _admit(self, name, parameters):
            raise KeyboardInterrupt

    reg = make(Counting())
    pending = reg.aexecute_tool("echo", {"text": "x"})  # no loop runs: nothing happens yet
    assert asyncio.iscoroutine(pending) and calls == []
    assert asyncio.run(pending) == ToolResponse.ok("ran") and len(calls) == 1
    assert asyncio.iscoroutinefunction(reg.aexecute_tool)

    async def in_a_loop():
        # A plain tool is run when awaited, as before; an error inside the registry surfaces
        # where the call is awaited, not where it is made.
        pending = reg.aexecute_tool("echo", {"text": "y"})
        assert len(calls) == 1
        assert await pending == ToolResponse.ok("ran")
        broken = Broken().aexecute_tool("echo", {})
        with pytest.raises(KeyboardInterrupt):
            await broken

    asyncio.run(in_a_loop())
    assert len(calls) == 2


def test_aexecute_mirrors_execute():
    class Boom(Echo):
        async def arun(self, parameters):
            raise ValueError("bad")

    async def main():
        reg = make(Echo(), Boom("boom"))
        ok = await reg.aexecute_tool("echo", {"text": "a", "times": 3})
        unknown = await reg.aexecute_tool("zzz", {})
        invalid = await reg.aexecute_tool("echo", {"text": 1})
        boom = await reg.aexecute_tool("boom", {"text": "x"})
        return ok, unknown, invalid, boom

    ok, unknown, invalid, boom = asyncio.run(main())
    assert ok.text == "aaa"
    assert unknown.is_error and "does not exist" in unknown.text
    assert invalid.is_error and "failed parameter validation" in invalid.text
    assert boom == ToolResponse.error("Error: tool 'boom' raised during execution: ValueError: bad")


def test_registry_with_tools_is_garbage_collected():
    import gc
    import weakref

    reg = make(Echo())
    tool = reg.get("echo")
    tool.registry = reg  # a cycle through the Rust-held tool object
    ref = weakref.ref(reg)
    del reg, tool
    gc.collect()
    assert ref() is None


def test_integral_float_reaches_an_int_parameter_as_int():
    from agentmaker import tool

    seen = []

    @tool
    def repeat(n: int, text: str = "x") -> str:
        """Repeat text n times."""
        seen.append(type(n))
        return text * n

    reg = ToolRegistry()
    reg.register(repeat)
    assert reg.execute_tool("repeat", {"n": 3.0}).text == "xxx"
    assert seen == [int]
    assert reg.execute_tool("repeat", {"n": 3.5}).is_error


def test_huge_exception_messages_are_cut_for_the_model():
    class Loud(Echo):
        def run(self, parameters):
            raise ValueError("x" * 1_000_000)

    resp = make(Loud("loud")).execute_tool("loud", {"text": "a"})
    assert resp.is_error
    assert resp.text.startswith("Error: tool 'loud' raised during execution: ValueError: xxx")
    assert len(resp.text) < 2100
