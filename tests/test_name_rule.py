"""The guide's name rule by default (``^[a-zA-Z0-9_-]{1,64}$``, an illegal name raises
ToolRegistrationError) on every path that names a tool or builds a registry; catalog names
(dots, ``::``, ``/``, up to 128 characters) only in ``ToolRegistry(names="catalog")``."""

from __future__ import annotations

import re
from typing import Any

import pytest
from agentmaker import (
    Agent,
    MCPClient,
    Tool,
    ToolConfigError,
    Toolkit,
    ToolParameter,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
    ToolRetriever,
    tool,
)
from agentmaker.testing import ScriptedLLM
from mcp_support import raw_client

GUIDE_RULE = "is not accepted: it must match ^[a-zA-Z0-9_-]{1,64}$ (the function-calling function-name rule)"
OPT_IN = 'ToolRegistry(names="catalog")'


def echo(x: int) -> int:
    """Return x."""
    return x


def named(name: str) -> Any:
    def double(x: int) -> int:
        """Multiply a number by two."""
        return 2 * x

    return tool(double, name=name)


class Dotted(Tool):
    def __init__(self, name: str) -> None:
        super().__init__(name, "A hand-written tool.")

    def get_parameters(self) -> list[ToolParameter]:
        return []

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.success("ran")


@pytest.mark.parametrize(
    ("bad", "why", "opt_in"),
    [
        ("math.factorial", "but character 5 is '.'", True),
        ("orders::list", "but character 7 is ':'", True),
        ("fs/read", "but character 3 is '/'", True),
        ("天气", "but character 1 is '天'", True),
        ("x" * 65, "but it is 65 characters long, more than 64", True),
        ("calc\n", "but character 5 is U+000A", False),
        ("has space", "but character 4 is U+0020", False),
    ],
)
def test_the_default_registry_keeps_the_guides_rule(bad, why, opt_in):
    reg = ToolRegistry()
    assert reg.name_rule == "strict"
    with pytest.raises(ToolRegistrationError) as info:
        reg.register(Dotted(bad))
    msg = str(info.value)
    assert msg.startswith(f"tool name {bad!r}".replace("'", '"') if "\n" not in bad else "tool name ")
    assert GUIDE_RULE in msg and why in msg and "rename the tool" in msg
    # The opt-in is offered only where it would help (never for whitespace or control characters).
    assert (OPT_IN in msg) is opt_in
    assert len(reg) == 0
    assert isinstance(info.value, ValueError)


def test_legal_names_register_by_default():
    reg = ToolRegistry()
    for name in ("a", "to_upper", "-x", "A-9_z", "x" * 64):
        reg.register(named(name))
    assert reg.names() == ["a", "to_upper", "-x", "A-9_z", "x" * 64]
    assert [t["function"]["name"] for t in reg.to_openai_schema()] == reg.names()


def test_every_registration_path_applies_the_rule():
    reg = ToolRegistry()
    for register in (
        lambda: reg.register(named("a.b")),
        lambda: reg.register_all([named("ok"), named("a.b")]),
        lambda: reg.register_callable(echo, name="a.b"),
        lambda: reg.register_function(lambda p: p, "a.b", "A tool."),
        lambda: reg.register(Dotted("a.b")),
    ):
        with pytest.raises(ToolRegistrationError, match=re.escape(GUIDE_RULE)):
            register()
    assert len(reg) == 0, "a refused batch registers nothing"


def test_the_agents_own_registry_and_toolkits_apply_the_rule():
    llm = ScriptedLLM(["done"])
    with pytest.raises(ToolRegistrationError, match=re.escape(GUIDE_RULE)):
        Agent("a", llm, tools=[named("math.double")])
    kit = Toolkit([named("refund")], prefix="billing.")
    with pytest.raises(ToolRegistrationError, match=re.escape(GUIDE_RULE)):
        Agent("a", llm, tools=[kit])
    # A catalog registry handed to the agent keeps its names.
    reg = ToolRegistry(names="catalog")
    reg.register_all(kit.tools)
    assert Agent("a", llm, tool_registry=reg).tool_registry.names() == ["billing.refund"]


def test_catalog_registries_accept_catalog_names_for_tool_rag():
    reg = ToolRegistry(names="catalog")
    assert reg.name_rule == "catalog"
    for name in ("weather.forecast", "currency::convert", "mail/send", "s" * 128):
        reg.register(named(name))
    reg.register_callable(echo, name="util.echo")
    reg.register_function(lambda p: p, "util.raw", "Return the parameters.")
    schema = ToolRetriever(reg, top_k=1).schema_for("weather forecast")
    assert schema[0]["function"]["name"] == "weather_forecast"
    # The catalog rule still refuses what no provider and no catalog could use.
    with pytest.raises(ToolRegistrationError, match="1 to 128 characters with no whitespace"):
        reg.register(named("s" * 129))


@pytest.mark.parametrize("bad", ["loose", "", "STRICT"])
def test_an_unknown_name_rule_is_refused(bad):
    with pytest.raises(ToolRegistrationError, match=r'names must be "strict" \(the default\) or "catalog"'):
        ToolRegistry(names=bad)


async def test_mcp_tools_meet_the_default_rule_whatever_the_server_calls_them():
    async with raw_client("catalog_names") as client:
        tools = await client.load_tools()
        reg = ToolRegistry()
        reg.register_all(tools)
        remote = {t.remote_name: t.name for t in tools}
        assert remote == {
            "ok": "raw_ok",
            "fs/read": "raw_fs_read",
            "math.factorial": "raw_math_factorial",
            "svc::get": "raw_svc__get",
            "q" * 100: ("raw_" + "q" * 100)[:64],
        }
        # The server is called with its own name.
        resp = await reg.aexecute_tool("raw_math_factorial", {})
        assert resp.text.endswith("fine (math.factorial)")
    # The namespace itself is held to the guide's rule when the client is made.
    with pytest.raises(ToolConfigError, match=re.escape("namespace must match ^[a-zA-Z0-9_-]{1,64}$")):
        MCPClient(command="x", namespace="ns.x")
