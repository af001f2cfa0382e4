"""The registry and the core types against a careless tool author. Programmer mistakes (wrong argument
types to the API, broken tool classes) raise; ``run`` receives the caller's own dict (no copy), as
in the reference; a tool is keyed by the name it had when registered, and renaming the object later
does not move it; whatever a tool returns or raises becomes a response.
"""

from __future__ import annotations

import asyncio

import pytest
from agentmaker import (
    ToolParameter,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
    tool,
)
from hostile_tools import Echo, Seen, make

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
