"""A Workspace's read-before-write records are per agent run: a run may only replace a file it
read itself, even when one Workspace serves many runs; a paused run stays the same run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentmaker import Agent, RunResult, ToolRegistry, Workspace, tool
from agentmaker.testing import ScriptedLLM

NOT_READ = (
    "Error: notes.txt already exists and has not been read in this run; read it with read_file "
    "first, then write it"
)


def edit(new: str, call_id: str = "e1") -> object:
    args = {"file_path": "notes.txt", "old_string": "draft", "new_string": new}
    return ScriptedLLM.tool_call("edit_file", args, call_id=call_id)


def read(call_id: str = "r1") -> object:
    return ScriptedLLM.tool_call("read_file", {"file_path": "notes.txt"}, call_id=call_id)


def test_a_run_cannot_replace_what_only_an_earlier_run_read(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("draft\n")
    ws = Workspace(tmp_path)
    first = Agent("a", ScriptedLLM([read(), "read it"]), tools=[ws]).run("go")
    assert first.tool_calls[0].status == "success"
    second = Agent(
        "a", ScriptedLLM([edit("final"), read("r2"), edit("final", "e2"), "done"]), tools=[ws]
    ).run("go")
    assert [r.status for r in second.tool_calls] == ["error", "success", "success"]
    assert second.tool_calls[0].output == NOT_READ
    assert (tmp_path / "notes.txt").read_text() == "final\n"


def test_concurrent_runs_sharing_a_workspace_keep_their_own_records(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("draft\n")
    ws = Workspace(tmp_path)
    gate = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait for the other run."""
        await gate.wait()
        return "go on"

    @tool
    async def release() -> str:
        """Let the other run go on."""
        gate.set()
        return "released"

    reader = Agent(
        "reader", ScriptedLLM([read(), ScriptedLLM.tool_call("release", {}), "ok"]), tools=[ws, release]
    )
    writer = Agent(
        "writer", ScriptedLLM([ScriptedLLM.tool_call("wait", {}), edit("mine"), "ok"]), tools=[ws, wait]
    )

    async def both() -> list[RunResult]:
        return list(await asyncio.gather(writer.arun("go"), reader.arun("go")))

    wrote, _ = asyncio.run(both())
    # The reader's read happened first, but in another run: the writer never read the file.
    assert wrote.tool_calls[1].output == NOT_READ
    assert (tmp_path / "notes.txt").read_text() == "draft\n"


def test_a_paused_run_resumed_from_json_is_still_the_run_that_read(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("draft\n")
    ws = Workspace(tmp_path)

    @tool(requires_confirmation=True)
    def publish() -> str:
        """Publish the notes."""
        return "published"

    llm = ScriptedLLM([read(), ScriptedLLM.tool_call("publish", {}, call_id="p1"), edit("published"), "done"])
    agent = Agent("a", llm, tools=[ws, publish], confirm="pause")
    paused = RunResult.from_json(agent.run("go").to_json())
    assert paused.status == "paused"
    done = agent.resume(paused, {"p1": True})
    assert done.tool_calls[-1].status == "success", done.tool_calls[-1].output
    assert (tmp_path / "notes.txt").read_text() == "published\n"


def test_direct_calls_share_one_record_of_their_own(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("draft\n")
    ws = Workspace(tmp_path)
    reg = ToolRegistry()
    reg.register_all(list(ws))
    args = {"file_path": "notes.txt", "old_string": "draft", "new_string": "direct"}
    assert reg.execute_tool("edit_file", args).text == NOT_READ
    assert reg.execute_tool("read_file", {"file_path": "notes.txt"}).status == "success"
    assert reg.execute_tool("edit_file", args).status == "success"
    # A run does not inherit what direct calls read.
    run = Agent("a", ScriptedLLM([edit("run"), "ok"]), tools=[ws]).run("go")
    assert run.tool_calls[0].output == NOT_READ
