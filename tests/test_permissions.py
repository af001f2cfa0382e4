"""ToolPermissions: the decision rule, its construction, and how the Agent enforces it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from agentmaker import Agent, Tool, ToolParameter, ToolPermissions, ToolRegistry, ToolResponse
from agentmaker.testing import ScriptedLLM


def remote(name: str, origin: str) -> SimpleNamespace:
    """Anything with a name and an origin can be judged (the origin of a real remote tool is
    stamped by the MCP client)."""
    return SimpleNamespace(name=name, origin=origin)


class Echo(Tool):
    def __init__(self, name: str, *, confirm: bool = False) -> None:
        super().__init__(name, f"Echo for {name}.")
        self.requires_confirmation = confirm
        self.runs = 0

    def get_parameters(self):
        return [ToolParameter("text", "string", "Text to echo.")]

    def run(self, parameters):
        self.runs += 1
        return ToolResponse.ok(parameters["text"])


# ------------------------------------------------------------------------------ the decision rule


def test_no_lists_allow_everything():
    p = ToolPermissions()
    assert p.denial_reason("shell") is None
    assert p.is_allowed(remote("x", "mcp:web"))
    assert p.allow is None and p.allow_origins is None
    assert p.deny == frozenset() and p.deny_origins == frozenset()


def test_deny_wins_over_allow_and_allow_origins():
    p = ToolPermissions(allow={"shell", "calculator"}, deny={"shell"}, allow_origins={"builtin"})
    assert p.denial_reason(remote("shell", "builtin")) == "tool 'shell' is on the deny list"
    assert p.is_allowed(remote("calculator", "builtin"))


def test_guide_example_builtin_only_and_no_shell():
    p = ToolPermissions(allow_origins={"builtin"}, deny={"shell"})
    assert p.is_allowed(remote("calculator", "builtin"))
    assert p.denial_reason(remote("shell", "builtin")) == "tool 'shell' is on the deny list"
    assert (
        p.denial_reason(remote("calc_add", "mcp:calc"))
        == "tool 'calc_add' (origin 'mcp:calc') is not on the allow list or allow_origins"
    )


def test_deny_origins_blocks_a_whole_server():
    p = ToolPermissions(deny_origins=["mcp:evil"])
    assert p.denial_reason(remote("search", "mcp:evil")) == (
        "tool 'search' origin 'mcp:evil' is on the deny_origins list"
    )
    assert p.is_allowed(remote("search", "builtin"))


def test_none_is_no_allowlist_but_empty_denies_everything():
    assert ToolPermissions(allow=None).is_allowed("anything")
    closed = ToolPermissions(allow=[])
    assert closed.allow == frozenset()
    assert (
        closed.denial_reason(remote("calculator", "builtin")) == "tool 'calculator' is not on the allow list"
    )
    closed_origins = ToolPermissions(allow_origins=())
    assert not closed_origins.is_allowed(remote("calculator", "builtin"))


def test_spoofed_name_does_not_ride_the_origin_allowlist():
    # A remote server naming its tool "calculator" is still judged by its stamped origin.
    p = ToolPermissions(allow_origins={"builtin"})
    assert not p.is_allowed(remote("calculator", "mcp:evil"))


def test_bare_names_have_no_origin():
    p = ToolPermissions(allow_origins={"builtin"})
    assert p.denial_reason("calculator") == "tool 'calculator' is not on the allow list"
    assert ToolPermissions(allow={"calculator"}, allow_origins={"builtin"}).is_allowed("calculator")


def test_matching_is_exact():
    p = ToolPermissions(allow={"calc"})
    assert not p.is_allowed("calculator")
    assert not p.is_allowed("Calc")


def test_construction_errors_are_clear():
    with pytest.raises(TypeError, match="not a single str"):
        ToolPermissions(allow="shell")
    with pytest.raises(TypeError, match="must contain only strings"):
        ToolPermissions(deny=["ok", 3])
    with pytest.raises(TypeError, match="collection of strings or None"):
        ToolPermissions(deny_origins=5)


def test_value_semantics():
    a = ToolPermissions(allow=["a", "b"], deny=("c",))
    assert a == ToolPermissions(allow={"b", "a"}, deny={"c"})
    assert a != ToolPermissions(allow={"a"})
    assert repr(a) == 'ToolPermissions(allow={"a", "b"}, deny={"c"}, allow_origins=None, deny_origins=set())'
    with pytest.raises(AttributeError):
        a.allow = {"x"}  # frozen


# ------------------------------------------------------------------------------ enforcement


def _registry(*tools: Tool) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register_all(list(tools))
    return reg


def test_denied_tools_are_hidden_from_the_model_and_refused():
    shell, echo = Echo("shell"), Echo("echo")
    llm = ScriptedLLM([ScriptedLLM.tool_call("shell", {"text": "rm -rf /"}), "ok"])
    agent = Agent("a", llm, tool_registry=_registry(shell, echo), permissions=ToolPermissions(deny={"shell"}))
    result = agent.run("go")
    assert llm.requests[0].tool_names == ["echo"]
    assert shell.runs == 0
    call = result.tool_calls[0]
    assert call.status == "denied"
    assert call.output == "(not allowed to call: tool 'shell' is on the deny list)"
    assert result.usage.tool_calls == 0
    assert result.messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": call.output}


def test_permissions_apply_before_confirmation():
    asked = []
    danger = Echo("danger", confirm=True)

    def confirm(tool, params):
        asked.append(tool.name)
        return True

    llm = ScriptedLLM([ScriptedLLM.tool_call("danger", {"text": "x"}), "ok"])
    agent = Agent(
        "a", llm, tools=[danger], confirm=confirm, permissions=ToolPermissions(allow=["something_else"])
    )
    result = agent.run("go")
    assert asked == [] and danger.runs == 0
    assert result.tool_calls[0].status == "denied"
    assert "tools" not in llm.requests[0].kwargs and llm.requests[0].tools is None


def test_unknown_tool_listing_shows_only_permitted_tools():
    llm = ScriptedLLM([ScriptedLLM.tool_call("nope", {}), "ok"])
    agent = Agent(
        "a",
        llm,
        tools=[Echo("shell"), Echo("echo"), Echo("other")],
        permissions=ToolPermissions(deny={"shell"}),
    )
    result = agent.run("go")
    assert result.tool_calls[0].output == "Error: tool 'nope' does not exist. Available tools: echo, other"
    assert result.tool_calls[0].status == "unknown_tool"


def test_unknown_tool_among_many_suggests_the_closest_permitted_names():
    # Past 20 tools the agent's text, like the registry's, suggests names instead of listing all.
    tools = [Echo(f"tool_{i}") for i in range(30)]
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_12x", {}), "ok"])
    agent = Agent("a", llm, tools=tools, permissions=ToolPermissions(deny={"tool_12"}))
    output = agent.run("go").tool_calls[0].output
    assert output.startswith("Error: tool 'tool_12x' does not exist. Closest names: tool_1, "), output
    assert output.endswith(". (29 tools are available; use an exact name.)"), output
    assert "tool_12," not in output


def test_origin_allowlist_enforced_by_the_agent():
    echo = Echo("echo")
    llm = ScriptedLLM([ScriptedLLM.tool_call("echo", {"text": "hi"}), "ok"])
    agent = Agent("a", llm, tools=[echo], permissions=ToolPermissions(allow_origins={"mcp:calc"}))
    result = agent.run("go")
    assert echo.runs == 0
    assert result.tool_calls[0].output == (
        "(not allowed to call: tool 'echo' (origin 'builtin') is not on the allow list or allow_origins)"
    )


def test_permissions_type_is_checked():
    with pytest.raises(TypeError, match="ToolPermissions"):
        Agent("a", ScriptedLLM([]), permissions={"deny": ["shell"]})
