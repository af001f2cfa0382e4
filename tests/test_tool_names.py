"""Real tool names (dots, ``::``, ``/``, long names): accepted by a ``names="catalog"`` registry,
rendered under a provider-safe wire name, and run under their real name when a model calls the
wire name. (The default rule is the guide's; see test_name_rule.py.)"""

from __future__ import annotations

import asyncio
import hashlib
import re

import pytest
from agentmaker import (
    Agent,
    ToolPermissions,
    ToolRegistrationError,
    ToolRegistry,
    ToolRetriever,
    ToolSearchTool,
    tool,
)
from agentmaker.testing import ScriptedLLM

# The function-name rules of the providers (see is_wire_safe in src/tool.rs).
OPENAI_ANTHROPIC = re.compile(r"[a-zA-Z0-9_-]{1,64}")
GEMINI = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}")


def named(name: str, doc: str = "Multiply a number by two."):
    def double(x: int) -> int:
        return 2 * x

    double.__doc__ = doc
    return tool(double, name=name)


def suffixed(base: str, real: str) -> str:
    return f"{base}_{hashlib.sha256(real.encode()).hexdigest()[:4]}"


def rendered_names(reg: ToolRegistry) -> dict[str, list[str]]:
    return {
        "openai": [t["function"]["name"] for t in reg.to_openai_schema()],
        "strict": [t["function"]["name"] for t in reg.to_openai_schema(strict=True)],
        "anthropic": [t["name"] for t in reg.to_anthropic_schema()],
        "gemini": [t["name"] for t in reg.to_gemini_schema()],
    }


LONG = "svc." + "x" * 120  # 124 characters


@pytest.mark.parametrize(
    ("real", "wire"),
    [
        ("math.factorial", "math_factorial"),
        ("orders::list", "orders_list"),
        ("fs/read", "fs_read"),
        ("天气.查询", "_"),
        ("1.start", "_1_start"),
        (LONG, ("svc_" + "x" * 120)[:64]),
        ("x" * 128, "x" * 64),
    ],
)
def test_real_names_are_accepted_and_rendered_under_wire_names(real, wire):
    reg = ToolRegistry(names="catalog")
    reg.register(named(real))
    assert reg.names() == [real] and reg.get(real).name == real
    assert reg.wire_name(real) == wire
    for provider, names in rendered_names(reg).items():
        assert names == [wire], provider
        assert OPENAI_ANTHROPIC.fullmatch(names[0]) and GEMINI.fullmatch(names[0])
    # The text forms are read by the model as text: they keep the real name.
    assert reg.get_catalog() == f"- {real}: Multiply a number by two."
    assert reg.get_tools_description().startswith(f"- {real}:")
    # A call on either name runs the tool; the wire name resolves to the real one.
    assert reg.execute_tool(wire, {"x": 4}).data == 8
    assert reg.execute_tool(real, {"x": 5}).data == 10
    assert reg.resolve_name(wire) == real and reg.resolve_name(real) == real
    assert reg.get(wire) is reg.get(real)


def test_legal_names_are_unchanged_and_not_mapped():
    reg = ToolRegistry(names="catalog")
    reg.register(named("to_upper"))
    reg.register(named("-x"))
    assert reg.wire_name("to_upper") == "to_upper" and reg.wire_name("-x") == "-x"
    assert rendered_names(reg)["anthropic"] == ["to_upper", "-x"]
    assert reg.resolve_name("nope") is None and reg.get("nope") is None
    with pytest.raises(KeyError, match="no tool named 'nope' is registered"):
        reg.wire_name("nope")


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("fs/read file", "character 8 is whitespace (U+0020)"),
        ("calc\n", "character 5 is whitespace (U+000A)"),
        ("tab\there", "character 4 is whitespace (U+0009)"),
        ("bell\x07", "character 5 is a control character (U+0007)"),
        ("nbsp\u00a0x", "character 5 is whitespace (U+00A0)"),
        ("x" * 129, "it is 129 characters long, more than 128"),
    ],
)
def test_names_that_cannot_be_accepted_say_why_and_what_to_do(bad, why):
    reg = ToolRegistry(names="catalog")
    with pytest.raises(ToolRegistrationError) as info:
        reg.register(named(bad))
    msg = str(info.value)
    assert msg.startswith("tool name ")
    assert why in msg
    assert "1 to 128 characters with no whitespace or control characters" in msg
    assert "rename the tool" in msg
    assert len(reg) == 0


def test_collisions_get_a_stable_suffix_whatever_the_order():
    first = ToolRegistry(names="catalog")
    for n in ("a.b", "a_b", "a:b"):
        first.register(named(n))
    second = ToolRegistry(names="catalog")
    for n in ("a:b", "a_b", "a.b"):
        second.register(named(n))
    for reg in (first, second):
        assert reg.wire_name("a_b") == "a_b"  # a legal name never changes
        assert reg.wire_name("a.b") == suffixed("a_b", "a.b")
        assert reg.wire_name("a:b") == suffixed("a_b", "a:b")
    assert rendered_names(first)["openai"] == [
        "a_b" if n == "a_b" else suffixed("a_b", n) for n in ("a.b", "a_b", "a:b")
    ]
    # Each wire name runs its own tool, the real name wins over a wire name.
    assert first.resolve_name(suffixed("a_b", "a.b")) == "a.b"
    assert first.resolve_name("a_b") == "a_b"
    # Once the clash is gone the readable name comes back (the map follows the registry).
    first.unregister("a_b")
    first.unregister("a:b")
    assert first.wire_name("a.b") == "a_b"
    assert rendered_names(first)["gemini"] == ["a_b"]
    assert first.execute_tool("a_b", {"x": 1}).data == 2


def test_a_long_name_colliding_after_the_cut_keeps_64_characters():
    reg = ToolRegistry(names="catalog")
    reg.register(named("x" * 64))
    reg.register(named("x" * 70 + ".y"))
    wire = reg.wire_name("x" * 70 + ".y")
    assert wire == suffixed("x" * 59, "x" * 70 + ".y") and len(wire) == 64


def test_unknown_tool_message_lists_real_names():
    reg = ToolRegistry(names="catalog")
    reg.register(named("math.factorial"))
    resp = reg.execute_tool("math_fact", {"x": 1})
    assert resp.status == "error" and "math.factorial" in resp.text


# ---------------------------------------------------------------------------------- the agent


def test_agent_runs_a_call_on_each_renderings_wire_name():
    reg = ToolRegistry(names="catalog")
    reg.register(named("math.double"))
    for provider, names in rendered_names(reg).items():
        llm = ScriptedLLM([ScriptedLLM.tool_call(names[0], {"x": 21}, call_id="c1"), "done"])
        result = Agent("a", llm, tools=reg).run("double 21")
        (call,) = result.tool_calls
        # The record carries the real name; the assistant message keeps the model's own call.
        assert (call.name, call.status, call.data) == ("math.double", "success", 42), provider
        assert result.messages[2]["tool_calls"][0]["function"]["name"] == "math_double"
        assert [t["function"]["name"] for t in llm.requests[0].tools] == ["math_double"]


def test_agent_arun_and_a_call_on_the_real_name():
    reg = ToolRegistry(names="catalog")
    reg.register(named("svc::double"))
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("svc_double", {"x": 1}, call_id="c1"),
            ScriptedLLM.tool_call("svc::double", {"x": 2}, call_id="c2"),
            "done",
        ]
    )
    result = asyncio.run(Agent("a", llm, tools=reg).arun("go"))
    assert [(c.name, c.data) for c in result.tool_calls] == [("svc::double", 2), ("svc::double", 4)]


def test_permissions_and_confirmation_see_the_real_name():
    reg = ToolRegistry(names="catalog")
    reg.register(named("math.double"))
    reg.register(named("math.triple"))
    asked = []

    def confirm(t, params):
        asked.append(t.name)
        return True

    reg.get("math.triple").requires_confirmation = True
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("math_double", {"x": 1}, call_id="c1"),
            ScriptedLLM.tool_call("math_triple", {"x": 1}, call_id="c2"),
            "done",
        ]
    )
    perms = ToolPermissions(deny={"math.double"})
    result = Agent("a", llm, tools=reg, permissions=perms, confirm=confirm).run("go")
    assert [t["function"]["name"] for t in llm.requests[0].tools] == ["math_triple"]
    denied, ran = result.tool_calls
    assert (denied.name, denied.status) == ("math.double", "denied")
    assert (ran.name, ran.status, ran.data) == ("math.triple", "success", 2)
    assert asked == ["math.triple"]


def catalog() -> ToolRegistry:
    reg = ToolRegistry(names="catalog")
    reg.register(named("weather.forecast", "Get the weather forecast for a city."))
    reg.register(named("currency::convert", "Convert an amount of money between currencies."))
    reg.register(named("mail/send", "Send an email message to a person."))
    return reg


def test_tool_search_discovery_adds_the_wire_schema_once():
    reg = catalog()
    tr = ToolRetriever(reg, always_include=("tool_search",), top_k=1)
    reg.register(ToolSearchTool(tr, top_k=1))
    search = ScriptedLLM.tool_call("tool_search", {"query": "convert money between currencies"}, call_id="s1")
    again = ScriptedLLM.tool_call("tool_search", {"query": "convert money currencies"}, call_id="s2")
    use = ScriptedLLM.tool_call("currency_convert", {"x": 3}, call_id="u1")
    llm = ScriptedLLM([search, again, use, "done"])
    result = Agent("a", llm, tools=reg, tool_retriever=tr).run("send an email")
    assert result.tool_calls[0].data == {"discovered": ["currency::convert"]}
    # The listing names the tool as the model must call it; the data keeps the real name.
    assert result.tool_calls[0].output.splitlines()[1].startswith("- currency_convert: Convert an amount")
    offered = [[t["function"]["name"] for t in r.tools] for r in llm.requests]
    assert offered[0] == ["tool_search", "mail_send"]
    assert offered[1] == offered[2] == ["tool_search", "mail_send", "currency_convert"]
    assert (result.tool_calls[2].name, result.tool_calls[2].data) == ("currency::convert", 6)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_retrieval_renders_wire_names_and_filters_by_real_name(provider):
    reg = catalog()
    tr = ToolRetriever(reg, top_k=1)
    schema = tr.schema_for("weather forecast for Paris", provider=provider)
    name = schema[0]["function"]["name"] if provider == "openai" else schema[0]["name"]
    assert name == "weather_forecast"
    perms = ToolPermissions(deny={"weather.forecast"})
    llm = ScriptedLLM(["ok"])
    Agent("a", llm, tools=reg, tool_retriever=tr, permissions=perms).run("weather forecast for Paris")
    offered = [t["function"]["name"] for t in llm.requests[0].tools or ()]
    assert "weather_forecast" not in offered
    # Denying another tool keeps this one: the filter found it by its wire name.
    llm = ScriptedLLM(["ok"])
    perms = ToolPermissions(deny={"mail/send"})
    Agent("a", llm, tools=reg, tool_retriever=tr, permissions=perms).run("weather forecast for Paris")
    assert [t["function"]["name"] for t in llm.requests[0].tools] == ["weather_forecast"]
