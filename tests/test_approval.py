"""Approval: rules that decide without asking, a limit on refusals, and no silent approval."""

from __future__ import annotations

import asyncio

import pytest
from agent_support import ENTRY_POINTS, run_by
from agentmaker import Agent, Approval, tool
from agentmaker.testing import ScriptedLLM


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    return f"deleted {path}"


@tool(requires_confirmation=True)
def send_mail(to: str) -> str:
    """Send a mail.

    Args:
        to: The address.
    """
    return f"sent to {to}"


@tool(requires_confirmation=True)
def read_secret(name: str) -> str:
    """Read a secret.

    Args:
        name: The secret.
    """
    return f"secret {name}"


ATTEMPTS_USED = (
    "Error: calls of tool 'delete_file' were refused 2 times in this run, the most its approval "
    "allows; this call was refused without asking. Do not call 'delete_file' again in this run: "
    "do without it or tell the user what you need."
)


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_after_max_attempts_refusals_a_tool_is_refused_without_asking(how):
    asked: list[str] = []

    def refuse(tool, parameters):
        asked.append(f"{tool.name}:{parameters}")
        return False

    script = [
        ScriptedLLM.tool_call("delete_file", {"path": "a"}),
        ScriptedLLM.tool_calls(("delete_file", {"path": "b"}), ("send_mail", {"to": "x"})),
        ScriptedLLM.tool_call("delete_file", {"path": "c"}),
        ScriptedLLM.tool_call("send_mail", {"to": "y"}),
        "gave up",
    ]
    agent = Agent(
        "a", ScriptedLLM(script), tools=[delete_file, send_mail], confirm=Approval(refuse, max_attempts=2)
    )
    result = run_by(agent, how)
    assert asked == [
        "delete_file:{'path': 'a'}",
        "delete_file:{'path': 'b'}",
        "send_mail:{'to': 'x'}",
        "send_mail:{'to': 'y'}",
    ]
    outputs = [(r.name, r.status, r.output) for r in result.tool_calls]
    assert outputs[3] == ("delete_file", "not_confirmed", ATTEMPTS_USED)
    assert [o[1] for o in outputs] == ["not_confirmed"] * 5
    assert outputs[4][2] == "Error: tool 'send_mail' was not approved; the call was not executed."


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_rules_decide_first_and_a_call_no_rule_covers_is_never_approved_silently(how):
    asked: list[str] = []

    async def approve(tool, parameters):
        await asyncio.sleep(0)
        asked.append(tool.name)
        return True

    calls = ScriptedLLM.tool_calls(
        ("read_secret", {"name": "k"}), ("delete_file", {"path": "a"}), ("send_mail", {"to": "x"})
    )
    rules = {"delete_file": False, "read_*": True}
    # With someone to ask, the call no rule covers is asked about; the others are not.
    agent = Agent(
        "a",
        ScriptedLLM([calls, "ok"]),
        tools=[delete_file, send_mail, read_secret],
        confirm=Approval(approve, rules=rules),
    )
    result = run_by(agent, how)
    assert asked == ["send_mail"]
    assert [(r.status, r.output) for r in result.tool_calls] == [
        ("success", "secret k"),
        (
            "not_confirmed",
            (
                "Error: tool 'delete_file' may not run: the approval rule 'delete_file' "
                "refuses it; the call was not executed."
            ),
        ),
        ("success", "sent to x"),
    ]
    # With nobody to ask, it is refused.
    agent = Agent(
        "a",
        ScriptedLLM([calls, "ok"]),
        tools=[delete_file, send_mail, read_secret],
        confirm=Approval(rules=rules),
    )
    result = run_by(agent, how)
    assert [r.status for r in result.tool_calls] == ["success", "not_confirmed", "not_confirmed"]
    assert result.tool_calls[2].output.startswith(
        "Error: tool 'send_mail' is a high-risk operation and needs confirmation, but no confirm callback"
    )


def test_a_rule_pauses_nothing_it_decides_and_pause_still_works():
    calls = ScriptedLLM.tool_calls(("read_secret", {"name": "k"}), ("send_mail", {"to": "x"}))
    agent = Agent(
        "a",
        ScriptedLLM([calls, "ok"]),
        tools=[send_mail, read_secret],
        confirm=Approval("pause", rules={"read_*": True}),
    )
    paused = agent.run("go")
    assert paused.status == "paused"
    assert [p.tool_name for p in paused.pending] == ["send_mail"]
    assert paused.tool_calls[0].output == "secret k"
    done = agent.resume(paused, {"call_2": True})
    assert (done.status, done.tool_calls[1].output) == ("completed", "sent to x")


def test_a_failing_callback_counts_as_a_refusal():
    def broken(tool, parameters):
        raise RuntimeError("no terminal")

    script = [
        ScriptedLLM.tool_call("send_mail", {"to": "x"}),
        ScriptedLLM.tool_call("send_mail", {"to": "y"}),
        "ok",
    ]
    agent = Agent("a", ScriptedLLM(script), tools=[send_mail], confirm=Approval(broken, max_attempts=1))
    outputs = [r.output for r in agent.run("go").tool_calls]
    assert outputs[0].startswith(
        "Error: the confirmation for tool 'send_mail' failed (RuntimeError: no terminal)"
    )
    assert "were refused once in this run" in outputs[1]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"ask": 3},
            TypeError,
            'Approval ask must be a callable (tool, parameters) -> bool, "pause" or None, got 3',
        ),
        ({"max_attempts": 0}, ValueError, "Approval max_attempts must be an integer >= 1 or None, got 0"),
        (
            {"max_attempts": True},
            ValueError,
            "Approval max_attempts must be an integer >= 1 or None, got True",
        ),
        ({"rules": {"x": "yes"}}, TypeError, "Approval rule 'x' must map to True or False, got 'yes'"),
        ({"rules": {"": True}}, ValueError, "Approval rule patterns must be non-empty strings, got ''"),
        (
            {"rules": ["x"]},
            TypeError,
            "Approval rules must be a mapping of tool name patterns to True/False, got ['x']",
        ),
    ],
)
def test_bad_approvals_are_refused(kwargs, error, message):
    with pytest.raises(error) as info:
        Approval(**kwargs)
    assert str(info.value) == message
