"""ToolResponse, ToolParameter and the Tool base class."""

from __future__ import annotations

import asyncio
import gc
import weakref

import agentmaker
import pytest
from agentmaker import Tool, ToolError, ToolParameter, ToolRegistrationError, ToolRegistry, ToolResponse

# ToolResponse --------------------------------------------------------------------------------


def test_response_constructors_set_status_and_data():
    assert ToolResponse.ok("42", data=42).status == "success"
    assert ToolResponse.ok("42", data=42).data == 42
    assert ToolResponse.partial("first 4000 chars ...").status == "partial"
    assert ToolResponse.error("query must not be empty").status == "error"
    assert ToolResponse("x").status == "success"
    assert ToolResponse("x").data is None
    assert ToolResponse("x", "partial", {"a": 1}).data == {"a": 1}


def test_response_rejects_unknown_status():
    with pytest.raises(ValueError, match="status must be 'success', 'partial' or 'error', got \"ok\""):
        ToolResponse("x", status="ok")
    r = ToolResponse.ok("x")
    with pytest.raises(ValueError):
        r.status = "Success"
    assert r.status == "success"
    r.status = "partial"
    assert r.status == "partial"


def test_response_text_must_be_str():
    with pytest.raises(TypeError, match="text must be a str, got int"):
        ToolResponse(5)
    with pytest.raises(TypeError):
        ToolResponse.ok(None)


def test_response_equality_repr_and_str():
    assert ToolResponse.ok("a", data=[1]) == ToolResponse("a", "success", [1])
    assert ToolResponse.ok("a") != ToolResponse.error("a")
    assert ToolResponse.ok("a", data=1) != ToolResponse.ok("a", data=2)
    assert ToolResponse.ok("a") != "a"
    assert repr(ToolResponse.ok("it's", data={"k": None})) == (
        "ToolResponse(text=\"it's\", status='success', data={'k': None})"
    )
    assert str(ToolResponse.error("boom")) == "boom"
    assert ToolResponse.error("x").is_error and not ToolResponse.ok("x").is_error
    assert ToolResponse.ok("t", data=3).to_dict() == {"text": "t", "status": "success", "data": 3}


def test_response_data_cycles_are_collected():
    class Box:
        pass

    box = Box()
    resp = ToolResponse.ok("x", data=box)
    box.resp = resp
    ref = weakref.ref(box)
    del box, resp
    gc.collect()
    assert ref() is None


# ToolParameter -------------------------------------------------------------------------------


def test_parameter_fields_and_defaults():
    p = ToolParameter("text", "string", "The text to reverse.")
    assert (p.name, p.type, p.description, p.required, p.default, p.schema) == (
        "text",
        "string",
        "The text to reverse.",
        True,
        None,
        None,
    )
    q = ToolParameter("days", "integer", "Days", required=False, default=3)
    assert q.required is False and q.default == 3
    assert p == ToolParameter("text", "string", "The text to reverse.")
    assert p != q
    assert (
        repr(q)
        == "ToolParameter(name='days', type='integer', description='Days', required=False, default=3, schema=None)"
    )


def test_parameter_schema_is_kept_verbatim():
    schema = {"type": "string", "enum": ["read", "append"], "description": "The action to run"}
    p = ToolParameter("action", "string", "The action to run", schema=schema)
    assert p.schema == schema
    with pytest.raises(TypeError, match="schema must be a dict"):
        ToolParameter("a", "string", "", schema=["not", "a", "dict"])


# Tool ----------------------------------------------------------------------------------------


class ReverseTool(Tool):
    def __init__(self):
        super().__init__("reverse", "Reverse a string.")

    def get_parameters(self):
        return [ToolParameter("text", "string", "The text to reverse.")]

    def run(self, parameters: dict) -> ToolResponse:
        return ToolResponse.ok(parameters["text"][::-1])


class AsyncEcho(Tool):
    supports_parallel = True

    def __init__(self):
        super().__init__("aecho", "Echo, natively async.")

    def get_parameters(self):
        return [ToolParameter("text", "string", "Text")]

    async def arun(self, parameters):
        await asyncio.sleep(0)
        return ToolResponse.ok(parameters["text"])


def test_subclass_basics():
    t = ReverseTool()
    assert isinstance(t, Tool)
    assert (t.name, t.description, t.origin) == ("reverse", "Reverse a string.", "builtin")
    assert t.run({"text": "abc"}) == ToolResponse.ok("cba")
    assert [p.name for p in t.get_parameters()] == ["text"]
    assert t.requires_confirmation is False and t.external_content is False and t.supports_parallel is False
    assert t.needs_confirmation({"text": "x"}) is False
    assert t.is_external_content({}) is False
    assert repr(t) == '<ReverseTool name="reverse" origin="builtin">'


def test_class_flags_and_per_instance_shadowing():
    class Risky(ReverseTool):
        requires_confirmation = True
        external_content = True

    r = Risky()
    assert r.needs_confirmation({}) is True and r.is_external_content({}) is True
    r.requires_confirmation = False
    assert r.needs_confirmation({}) is False
    assert Risky.requires_confirmation is True


def test_origin_is_read_only():
    t = ReverseTool()
    with pytest.raises(AttributeError):
        t.origin = "mcp:evil"
    assert t.origin == "builtin"


def test_default_arun_runs_run_on_a_worker_thread():
    import threading

    seen = {}

    class WhereTool(ReverseTool):
        def run(self, parameters):
            seen["thread"] = threading.get_ident()
            return ToolResponse.ok("x")

    async def main():
        return await WhereTool().arun({"text": "a"})

    assert asyncio.run(main()) == ToolResponse.ok("x")
    assert seen["thread"] != threading.get_ident()


def test_async_only_tool_has_no_sync_run():
    t = AsyncEcho()
    with pytest.raises(NotImplementedError, match="Tool 'aecho' does not implement run"):
        t.run({"text": "x"})
    assert asyncio.run(t.arun({"text": "hi"})) == ToolResponse.ok("hi")


def test_tool_without_run_or_arun_cannot_register():
    class Nothing(Tool):
        def __init__(self):
            super().__init__("nothing", "does nothing")

    reg = ToolRegistry()
    with pytest.raises(ToolRegistrationError, match="implements neither run\\(\\) nor arun\\(\\)"):
        reg.register(Nothing())
    with pytest.raises(NotImplementedError):
        asyncio.run(Nothing().arun({}))
    assert len(reg) == 0


def test_exception_tree():
    assert issubclass(ToolRegistrationError, ToolError)
    assert issubclass(ToolRegistrationError, ValueError)
    assert issubclass(ToolError, agentmaker.AgentmakerError)
    for name in agentmaker.__all__:
        assert hasattr(agentmaker, name), name
