"""A served MCP call goes through the same guardrails, cut and approval rules as an agent's call
(``serve_mcp(run_policy=..., confirm=Approval(...))``), over HTTP on 127.0.0.1."""

from __future__ import annotations

from agentmaker import Approval, GuardrailDecision, RunPolicy, ToolCheck
from mcp_servers import served_tools
from test_mcp_serve_http import serving, session

asked: list[str] = []


def confirm(tool, parameters):
    asked.append(parameters["path"])
    return True


def no_etc(check: ToolCheck) -> GuardrailDecision | None:
    if check.tool_name == "wipe" and check.arguments["path"].startswith("/etc"):
        return GuardrailDecision.refuse("/etc is off limits.")
    if check.arguments.get("path") == "/trip":
        return GuardrailDecision.trip("a forbidden path")
    return None


async def shout(check: ToolCheck) -> GuardrailDecision:
    return GuardrailDecision.replace(f"{check.output} (checked)\n" + "x" * 40)


async def test_served_calls_pass_the_policy_guardrails_and_cut():
    asked.clear()
    policy = RunPolicy(input_guardrails=[no_etc], output_guardrails=[shout], max_result_chars=20)
    async with serving(served_tools.build(), confirm=confirm, run_policy=policy) as url, session(url) as s:
        added = await s.call_tool("add", {"a": 1, "b": 2})
        refused = await s.call_tool("wipe", {"path": "/etc/passwd"})
        tripped = await s.call_tool("wipe", {"path": "/trip"})
        wiped = await s.call_tool("wipe", {"path": "/tmp/z"})
    assert added.is_error is False
    assert added.content[0].text.startswith("3 (checked)\n[result cut: showing 12 of 52 characters")
    assert (refused.is_error, refused.content[0].text) == (
        True,
        "Error: a guardrail refused the call to tool 'wipe': /etc is off limits. The call was not executed.",
    )
    assert (tripped.is_error, tripped.content[0].text) == (
        True,
        "Error: a guardrail stopped the run at tool 'wipe': a forbidden path",
    )
    assert wiped.is_error is False and wiped.content[0].text.startswith("wiped /tmp/z (checke\n[result cut")
    assert asked == ["/tmp/z"]  # input guardrails run before confirmation


async def test_served_calls_follow_approval_rules():
    asked.clear()
    approval = Approval(confirm, rules={"wipe": False})
    async with serving(served_tools.build(), confirm=approval) as url, session(url) as s:
        refused = await s.call_tool("wipe", {"path": "/tmp/z"})
    assert refused.is_error is True
    assert refused.content[0].text == (
        "Error: tool 'wipe' may not run: the approval rule 'wipe' refuses it; the call was not executed."
    )
    assert asked == []
