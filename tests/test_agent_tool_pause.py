"""A sub-agent (``Agent.as_tool``) that needs a person's decision pauses the calling run; resuming
the caller resumes the sub-agent first."""

from __future__ import annotations

import pytest
from agentmaker import Agent, LLMResponse, RunResult, ToolRegistry, UserInputTool, tool
from agentmaker.testing import ScriptedLLM

deleted: list[str] = []


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    deleted.append(path)
    return f"deleted {path}"


def delegate(task: str, call_id: str = "s1", name: str = "cleaner") -> LLMResponse:
    return ScriptedLLM.tool_call(name, {"input": task}, call_id=call_id)


def cleaner(*script: object) -> Agent:
    return Agent("cleaner", ScriptedLLM(list(script)), tools=[delete_file])


@pytest.fixture(autouse=True)
def _clean() -> None:
    deleted.clear()


def test_the_caller_pauses_on_the_sub_agents_call_and_resumes_it() -> None:
    sub = cleaner(ScriptedLLM.tool_call("delete_file", {"path": "a.txt"}, call_id="d1"), "a.txt is gone")
    llm = ScriptedLLM([delegate("remove a.txt"), "Cleaned up."])
    lead = Agent("lead", llm, tools=[sub.as_tool()], confirm="pause")
    paused = lead.run("go")
    assert paused.status == "paused" and deleted == []
    [p] = paused.pending
    assert (p.id, p.tool_name, p.arguments, p.kind) == ("s1/d1", "delete_file", {"path": "a.txt"}, "approval")
    assert paused.tool_calls[0].status == "pending"
    stored = RunResult.from_json(paused.to_json())  # a person decides elsewhere
    done = lead.resume(stored, {"s1/d1": True}, digests={"s1/d1": p.digest})
    assert done.status == "completed" and done.final_output == "Cleaned up."
    assert deleted == ["a.txt"]
    rec = done.tool_calls[0]
    assert (rec.status, rec.output) == ("success", "a.txt is gone")
    assert rec.data.status == "completed" and rec.data.tool_calls[0].status == "success"
    tool_messages = [m for m in done.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["s1"]
    assert done.usage.llm_calls == 4  # the caller's two, the sub-agent's two
    assert done.usage.tool_calls == 2  # the delegation (once, though it paused) and the delete


def test_a_refusal_reaches_the_sub_agents_model() -> None:
    sub_llm = ScriptedLLM([ScriptedLLM.tool_call("delete_file", {"path": "a.txt"}, call_id="d1"), "kept it"])
    sub = Agent("cleaner", sub_llm, tools=[delete_file])
    lead = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[sub.as_tool()], confirm="pause")
    done = lead.resume(lead.run("go"), {"s1/d1": "the file is still needed"})
    assert deleted == []
    assert done.tool_calls[0].output == "kept it"
    assert "the file is still needed" in sub_llm.requests[1].messages[-1]["content"]


def test_own_and_sub_agent_calls_of_one_turn_are_decided_together() -> None:
    sub = cleaner(ScriptedLLM.tool_call("delete_file", {"path": "b.txt"}, call_id="d1"), "b gone")
    turn = ScriptedLLM.tool_calls(("delete_file", {"path": "a.txt"}, "own"), delegate("remove b", "s1"))
    lead = Agent(
        "lead", ScriptedLLM([turn, "both done"]), tools=[delete_file, sub.as_tool()], confirm="pause"
    )
    paused = lead.run("go")
    assert [p.id for p in paused.pending] == ["own", "s1/d1"]
    done = lead.resume(paused, {"own": True, "s1/d1": True})
    assert done.status == "completed" and sorted(deleted) == ["a.txt", "b.txt"]
    assert [m["tool_call_id"] for m in done.messages if m["role"] == "tool"] == ["own", "s1"]


def test_agents_nested_two_deep_pause_and_resume_through_both() -> None:
    leaf = cleaner(ScriptedLLM.tool_call("delete_file", {"path": "c.txt"}, call_id="d1"), "c gone")
    mid = Agent("manager", ScriptedLLM([delegate("remove c", "s2"), "manager: done"]), tools=[leaf.as_tool()])
    lead = Agent(
        "lead",
        ScriptedLLM([delegate("tidy", "s1", "manager"), "all done"]),
        tools=[mid.as_tool()],
        confirm="pause",
    )
    paused = RunResult.from_json(lead.run("go").to_json())
    assert [p.id for p in paused.pending] == ["s1/s2/d1"]
    done = lead.resume(paused, {"s1/s2/d1": True})
    assert done.final_output == "all done" and deleted == ["c.txt"]
    assert done.tool_calls[0].data.tool_calls[0].data.status == "completed"


def test_a_sub_agent_that_pauses_again_pauses_the_caller_again() -> None:
    sub = cleaner(
        ScriptedLLM.tool_call("delete_file", {"path": "a.txt"}, call_id="d1"),
        ScriptedLLM.tool_call("delete_file", {"path": "b.txt"}, call_id="d2"),
        "both gone",
    )
    lead = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[sub.as_tool()], confirm="pause")
    first = lead.run("go")
    second = lead.resume(first, {"s1/d1": True})
    assert second.status == "paused" and [p.id for p in second.pending] == ["s1/d2"]
    assert [m["tool_call_id"] for m in second.messages if m["role"] == "tool"] == []
    done = lead.resume(second, {"s1/d2": True})
    assert done.status == "completed" and deleted == ["a.txt", "b.txt"]


def test_a_question_inside_a_sub_agent_is_answered_through_the_caller() -> None:
    ask = UserInputTool(mode="pause")
    sub_llm = ScriptedLLM(
        [ScriptedLLM.tool_call("ask_user", {"question": "Which colour?"}, call_id="q1"), "blue it is"]
    )
    sub = Agent("painter", sub_llm, tools=[ask])
    lead = Agent("lead", ScriptedLLM([delegate("paint", name="painter"), "painted"]), tools=[sub.as_tool()])
    paused = lead.run("go")
    [p] = paused.pending
    assert (p.id, p.kind) == ("s1/q1", "question")
    done = lead.resume(paused, answers={"s1/q1": "blue"})
    assert done.tool_calls[0].output == "blue it is"
    assert sub_llm.requests[1].messages[-1]["content"] == "The person answered: blue"


def test_an_edited_sub_agent_call_is_refused() -> None:
    sub = cleaner(ScriptedLLM.tool_call("delete_file", {"path": "a.txt"}, call_id="d1"), "gone")
    lead = Agent("lead", ScriptedLLM([delegate("x"), "ok"]), tools=[sub.as_tool()], confirm="pause")
    text = lead.run("go").to_json()
    edited = RunResult.from_json(text.replace('"path": "a.txt"', '"path": "/etc/passwd"'))
    with pytest.raises(ValueError, match="is not the call that was paused"):
        lead.resume(edited, {"s1/d1": True})
    assert deleted == []


def test_outside_an_agent_the_paused_run_is_handed_back() -> None:
    sub = Agent(
        "cleaner",
        ScriptedLLM([ScriptedLLM.tool_call("delete_file", {"path": "a.txt"}, call_id="d1"), "gone"]),
        tools=[delete_file],
        confirm="pause",
    )
    reg = ToolRegistry()
    reg.register(sub.as_tool())
    out = reg.execute_tool("cleaner", {"input": "x"})
    assert out.status == "error"
    assert out.text.startswith("Error: the agent cleaner paused: 1 of its calls wait for a person's decision")
    done = sub.resume(out.data, {"d1": True})
    assert done.final_output == "gone" and deleted == ["a.txt"]
