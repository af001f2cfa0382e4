"""TodoTool (``write_todos``): the run's task list, kept in the run, in events and in the result."""

from __future__ import annotations

import asyncio

import pytest
from agent_support import ENTRY_POINTS, run_by
from agentmaker import (
    Agent,
    RunEnd,
    RunResult,
    TodoTool,
    TodoUpdate,
    ToolConfigError,
    ToolEnd,
    ToolRegistry,
    ToolStart,
    tool,
)
from agentmaker.testing import ScriptedLLM

FIRST = [
    {"content": "Read the config", "status": "in_progress"},
    {"content": "Fix the parser", "status": "pending"},
]
SECOND = [
    {"content": "Read the config", "status": "completed"},
    {"content": "Fix the parser", "status": "in_progress"},
]


def todo_script(*lists: list[dict[str, str]], answer: str = "done") -> ScriptedLLM:
    return ScriptedLLM(
        [
            *(
                ScriptedLLM.tool_call("write_todos", {"todos": t}, call_id=f"t{i}")
                for i, t in enumerate(lists)
            ),
            answer,
        ]
    )


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_run_keeps_the_last_list_and_the_model_reads_it_whole(how: str) -> None:
    llm = todo_script(FIRST, SECOND)
    result = run_by(Agent("a", llm, tools=[TodoTool()]), how)
    assert result.todos == SECOND
    tool_messages = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert tool_messages[0] == (
        "Task list updated: 0 of 2 completed, 1 in progress, 1 pending.\n"
        "1. [~] Read the config\n2. [ ] Fix the parser"
    )
    assert tool_messages[1].startswith("Task list updated: 1 of 2 completed, 1 in progress, 0 pending.")
    assert [r.data for r in result.tool_calls] == [{"todos": FIRST}, {"todos": SECOND}]


def test_each_change_is_an_event_between_the_calls_start_and_end() -> None:
    seen: list[object] = []

    class Hooks:
        def on_tool_start(self, e: ToolStart) -> None:
            seen.append(("start", e.call_id))

        def on_todo_update(self, e: TodoUpdate) -> None:
            seen.append(("todos", e.turn, e.todos))

        def on_tool_end(self, e: ToolEnd) -> None:
            seen.append(("end", e.call_id))

    Agent("a", todo_script(FIRST, SECOND), tools=[TodoTool()], hooks=Hooks()).run("go")
    assert seen == [
        ("start", "t0"),
        ("todos", 1, FIRST),
        ("end", "t0"),
        ("start", "t1"),
        ("todos", 2, SECOND),
        ("end", "t1"),
    ]
    events = list(Agent("a", todo_script(FIRST), tools=[TodoTool()]).stream("go"))
    updates = [e for e in events if isinstance(e, TodoUpdate)]
    assert [u.todos for u in updates] == [FIRST]
    assert isinstance(events[-1], RunEnd) and events[-1].result.todos == FIRST


def test_a_bad_list_is_refused_and_the_previous_list_stays() -> None:
    too_many = [{"content": f"step {i}", "status": "pending"} for i in range(101)]
    llm = todo_script(
        FIRST, [{"content": "x", "status": "done"}], too_many, [{"content": "   ", "status": "pending"}]
    )
    result = Agent("a", llm, tools=[TodoTool()]).run("go")
    assert [r.status for r in result.tool_calls] == ["success", "invalid", "invalid", "error"]
    assert "status" in result.tool_calls[1].output and "done" in result.tool_calls[1].output
    assert result.tool_calls[2].output.endswith("has more than 100 items")
    assert result.tool_calls[3].output == "Error: item 1 has no content."
    assert result.todos == FIRST


def test_concurrent_runs_sharing_one_tool_keep_their_own_lists() -> None:
    shared = TodoTool()

    async def both() -> list[RunResult]:
        a = Agent("a", todo_script(FIRST), tools=[shared])
        b = Agent("b", todo_script(SECOND), tools=[shared])
        return list(await asyncio.gather(a.arun("go"), b.arun("go")))

    ra, rb = asyncio.run(both())
    assert (ra.todos, rb.todos) == (FIRST, SECOND)
    assert shared.todos == []  # nothing was written outside a run


def test_a_paused_run_keeps_its_list_through_json_and_resume() -> None:
    @tool(requires_confirmation=True)
    def deploy() -> str:
        """Deploy."""
        return "deployed"

    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("write_todos", {"todos": FIRST}, call_id="t0"),
            ScriptedLLM.tool_call("deploy", {}, call_id="d1"),
            ScriptedLLM.tool_call("write_todos", {"todos": SECOND}, call_id="t1"),
            "shipped",
        ]
    )
    agent = Agent("a", llm, tools=[TodoTool(), deploy], confirm="pause")
    paused = agent.run("go")
    assert paused.status == "paused" and paused.todos == FIRST
    stored = RunResult.from_json(paused.to_json())
    assert stored.todos == FIRST
    done = agent.resume(stored, {"d1": True})
    assert done.status == "completed" and done.todos == SECOND


def test_outside_an_agent_the_tool_keeps_the_list_itself() -> None:
    todo = TodoTool()
    reg = ToolRegistry()
    reg.register(todo)
    out = reg.execute_tool("write_todos", {"todos": FIRST})
    assert out.status == "success" and todo.todos == FIRST
    out = reg.execute_tool("write_todos", {"todos": []})
    assert out.text == "Task list cleared (no items)." and todo.todos == []
    bad = reg.execute_tool("write_todos", {"todos": "a list please"})
    assert bad.status == "error" and todo.todos == []


def test_texts_can_be_replaced_by_key_and_a_misspelt_key_is_refused() -> None:
    todo = TodoTool(prompts={"tool.msg.write_todos.empty": "Nothing left."})
    assert todo.run({"todos": []}).text == "Nothing left."
    with pytest.raises(ToolConfigError, match="tool.msg.write_todos.empty"):
        TodoTool(prompts={"tool.msg.write_todos.emtpy": "x"})
    schema = TodoTool().get_input_schema()
    assert schema["properties"]["todos"]["items"]["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "completed",
    ]
