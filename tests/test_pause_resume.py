"""Human in the loop: confirm="pause", result.pending, Agent.resume / aresume, JSON round trip."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys

import pytest
from agentmaker import Agent, PendingCall, RunResult, StopAgentRun, tool
from agentmaker.testing import ScriptedLLM

DELETED: list[str] = []


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    DELETED.append(path)
    return f"deleted {path}"


@tool
def look(path: str) -> str:
    """Look at a file.

    Args:
        path: The file.
    """
    return f"{path}: 3 bytes"


@pytest.fixture(autouse=True)
def _clean():
    DELETED.clear()


def paused_run(*replies, use_async=False):
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_calls(
                ("look", {"path": "a"}), ("delete", {"path": "a"}), ("delete", {"path": "b"})
            ),
            *replies,
        ]
    )
    agent = Agent("a", llm, tools=[delete, look], confirm="pause")
    result = asyncio.run(agent.arun("clean up")) if use_async else agent.run("clean up")
    return agent, llm, result


def digest(name, args):
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(name.encode() + b"\0" + canonical.encode()).hexdigest()


@pytest.mark.parametrize("use_async", [False, True])
def test_a_call_needing_confirmation_pauses_the_run_after_the_others_ran(use_async):
    _, llm, result = paused_run("unused", use_async=use_async)
    assert result.status == "paused"
    assert result.final_output == ""
    assert llm.calls == 1
    assert DELETED == []
    assert result.pending == [
        PendingCall("call_2", "delete", {"path": "a"}, digest("delete", {"path": "a"})),
        PendingCall("call_3", "delete", {"path": "b"}, digest("delete", {"path": "b"})),
    ]
    assert [r.status for r in result.tool_calls] == ["success", "pending", "pending"]
    # The call that needed no approval ran and its result is in the transcript already.
    assert result.messages[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "a: 3 bytes"}
    assert result.usage.tool_calls == 1


@pytest.mark.parametrize("use_async", [False, True])
def test_resume_runs_approved_calls_and_refuses_the_others(use_async):
    agent, llm, paused = paused_run("Deleted a, kept b.", use_async=use_async)
    decisions = {"call_2": True, "call_3": "b is still in use"}
    if use_async:
        result = asyncio.run(agent.aresume(paused, decisions))
    else:
        result = agent.resume(paused, decisions)
    assert result.status == "completed"
    assert result.final_output == "Deleted a, kept b."
    assert DELETED == ["a"]
    assert [r.status for r in result.tool_calls] == ["success", "success", "not_confirmed"]
    sent = llm.requests[1].messages
    tool_messages = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert tool_messages == {
        "call_1": "a: 3 bytes",
        "call_2": "deleted a",
        "call_3": "Error: tool 'delete' was not approved: b is still in use. The call was not executed.",
    }
    assert result.usage.llm_calls == 2
    assert result.usage.tool_calls == 2
    assert [m["role"] for m in result.new_messages()] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]


def test_a_plain_refusal_reads_not_approved():
    agent, _, paused = paused_run("ok")
    result = agent.resume(paused, {"call_2": False, "call_3": False})
    assert DELETED == []
    assert result.tool_calls[1].output == "Error: tool 'delete' was not approved; the call was not executed."


def test_a_paused_result_resumes_from_json_in_another_process():
    _, _, paused = paused_run()
    text = paused.to_json()
    assert RunResult.from_json(text).pending == paused.pending
    script = (
        "import sys\n"
        "from agentmaker import Agent, RunResult, tool\n"
        "from agentmaker.testing import ScriptedLLM\n"
        "@tool(requires_confirmation=True)\n"
        "def delete(path: str) -> str:\n"
        "    '''Delete a file.\n\n    Args:\n        path: The file.\n    '''\n"
        "    return 'deleted ' + path\n"
        "@tool\n"
        "def look(path: str) -> str:\n"
        "    '''Look at a file.\n\n    Args:\n        path: The file.\n    '''\n"
        "    return path\n"
        "paused = RunResult.from_json(sys.stdin.read())\n"
        "agent = Agent('a', ScriptedLLM(['all done']), tools=[delete, look], confirm='pause')\n"
        "r = agent.resume(paused, {p.id: True for p in paused.pending})\n"
        "print(r.status, r.final_output, [c.output for c in r.tool_calls], r.usage.llm_calls)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], input=text, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "completed all done ['a: 3 bytes', 'deleted a', 'deleted b'] 2"


def test_an_edited_call_is_not_run_on_an_approval_given_for_another():
    agent, _, paused = paused_run("never")
    doc = json.loads(paused.to_json())
    doc["pending"][0]["arguments"] = {"path": "/etc"}
    with pytest.raises(ValueError, match=r"paused call 'call_2' \(delete\) is not the call that was paused"):
        agent.resume(RunResult.from_json(json.dumps(doc)), {"call_2": True, "call_3": True})
    assert DELETED == []


@pytest.mark.parametrize(
    ("decisions", "error", "text"),
    [
        (
            {"call_2": True, "call_3": True, "call_9": True},
            ValueError,
            "decision for unknown call id 'call_9'",
        ),
        ({"call_2": True}, ValueError, r"no decision for paused call 'call_3' \(delete\)"),
        ({"call_2": True, "call_3": "yes"[:0]}, TypeError, "must be True, False or a non-empty reason"),
        ({"call_2": 1, "call_3": True}, TypeError, "must be True, False or a non-empty reason, got 1"),
        ([("call_2", True)], TypeError, "decisions must be a dict"),
    ],
)
def test_bad_decisions_are_refused_before_anything_runs(decisions, error, text):
    agent, llm, paused = paused_run("never")
    with pytest.raises(error, match=text):
        agent.resume(paused, decisions)
    assert DELETED == []
    assert llm.calls == 1


def test_only_a_paused_result_can_be_resumed():
    llm = ScriptedLLM(["hi"])
    agent = Agent("a", llm, confirm="pause")
    done = agent.run("x")
    with pytest.raises(
        ValueError, match="only a paused run can be resumed; this result's status is 'completed'"
    ):
        agent.resume(done, {})
    with pytest.raises(TypeError, match="resume needs the RunResult of a paused run"):
        agent.resume("nope", {})  # type: ignore[arg-type]


def test_a_resumed_run_can_pause_again():
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("delete", {"path": "a"}, call_id="c1"),
            ScriptedLLM.tool_call("delete", {"path": "b"}, call_id="c2"),
            "both gone",
        ]
    )
    agent = Agent("a", llm, tools=[delete], confirm="pause")
    first = agent.run("go")
    second = agent.resume(first, {"c1": True})
    assert second.status == "paused"
    assert [p.id for p in second.pending] == ["c2"]
    third = agent.resume(second, {"c2": True})
    assert third.final_output == "both gone"
    assert DELETED == ["a", "b"]
    assert [r.status for r in third.tool_calls] == ["success", "success"]


def test_a_call_that_stops_the_run_skips_the_pending_ones():
    @tool
    def halt() -> str:
        """Stop everything."""
        raise StopAgentRun("halted")

    llm = ScriptedLLM([ScriptedLLM.tool_calls(("delete", {"path": "a"}), ("halt", {}))])
    result = Agent("a", llm, tools=[delete, halt], confirm="pause").run("go")
    assert result.status == "stopped"
    assert result.final_output == "halted"
    assert result.pending == []
    assert [r.status for r in result.tool_calls] == ["skipped", "stopped"]
    answered = {m["tool_call_id"] for m in result.messages if m["role"] == "tool"}
    assert answered == {"call_1", "call_2"}


def test_confirm_must_be_a_callable_or_pause():
    with pytest.raises(TypeError, match="confirm must be a callable .* or \"pause\", got 'wait'"):
        Agent("a", ScriptedLLM([]), confirm="wait")  # type: ignore[arg-type]


def test_the_digest_can_be_recomputed_from_python_for_any_json_arguments():
    @tool(requires_confirmation=True)
    def pay(payee: str, amount: float, tags: list[str], meta: dict[str, int]) -> str:
        """Pay someone.

        Args:
            payee: Who.
            amount: How much.
            tags: Labels.
            meta: Extra numbers.
        """
        return "paid"

    args = {"payee": "Zoë «Ω»", "amount": 1e16, "tags": ["b", "a"], "meta": {"z": 1, "a": 2}}
    llm = ScriptedLLM([ScriptedLLM.tool_call("pay", args)])
    paused = Agent("a", llm, tools=[pay], confirm="pause").run("pay")
    assert paused.pending[0].digest == digest("pay", args)


def test_an_approval_holds_only_for_the_digest_the_person_saw():
    agent, _, paused = paused_run("done")
    shown = {p.id: p.digest for p in paused.pending}
    # The stored result is rewritten, digest included: the core's check alone cannot tell.
    doc = json.loads(paused.to_json())
    doc["pending"][0]["arguments"] = {"path": "/etc"}
    doc["pending"][0]["digest"] = digest("delete", {"path": "/etc"})
    forged = RunResult.from_json(json.dumps(doc))
    with pytest.raises(
        ValueError, match=r"the approval of call 'call_2' \(delete\) was given for digest [0-9a-f]{64}, but"
    ):
        agent.resume(forged, {"call_2": True, "call_3": False}, digests=shown)
    assert DELETED == []
    with pytest.raises(ValueError, match=r"no digest for approved call 'call_3' \(delete\)"):
        agent.resume(paused, {"call_2": True, "call_3": True}, digests={"call_2": shown["call_2"]})
    result = agent.resume(paused, {"call_2": True, "call_3": False}, digests={"call_2": shown["call_2"]})
    assert DELETED == ["a"]
    assert result.final_output == "done"
