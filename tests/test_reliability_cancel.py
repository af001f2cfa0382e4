"""Cancelling an agent run while a CLI command or an MCP call is in flight leaves no process
behind, the event loop stays usable and the next run works; same for a timeout hit inside a
command. (Ctrl-C is in test_reliability_sigint.py.)"""

from __future__ import annotations

import asyncio
import os

import pytest
from agentmaker import Agent, CLITool, RunLimitExceeded, RunPolicy, ToolRegistry
from agentmaker.testing import ScriptedLLM
from proc_table import descendants
from reliability_support import (
    LONG,
    approve,
    assert_all_gone,
    assert_no_sleepers,
    poll,
    shell_agent,
    silent_mcp,
    wait_for_sleepers,
)

call = ScriptedLLM.tool_call
calls = ScriptedLLM.tool_calls


async def next_run_works() -> None:
    """The loop is usable and a new run (here with a command) works."""
    result = await shell_agent([call("shell", {"command": "echo again"}), "done"]).arun("go")
    assert result.final_output == "done"
    assert "[exit code 0]\nstdout:\nagain\n" in result.tool_calls[0].output, result.tool_calls[0].output


async def cancel_when_running(tasks: list[asyncio.Future], n: int) -> list:
    """Cancels ``tasks`` once ``n`` commands run; returns the commands seen."""
    seen = await asyncio.to_thread(wait_for_sleepers, n)
    for t in tasks:
        t.cancel()
    for t in tasks:
        with pytest.raises(asyncio.CancelledError):
            await t
    return seen


async def test_cancelling_a_run_kills_its_cli_command():
    task = asyncio.create_task(shell_agent([call("shell", {"command": LONG}), "x"]).arun("go"))
    assert_all_gone(await cancel_when_running([task], 1))
    await next_run_works()


async def test_cancelling_two_runs_at_once_kills_both_commands():
    tasks = [
        asyncio.create_task(shell_agent([call("shell", {"command": LONG}), "x"]).arun("go")) for _ in range(2)
    ]
    seen = await cancel_when_running(tasks, 2)
    assert len(seen) == 2
    assert_all_gone(seen)
    await next_run_works()


async def test_cancelling_a_run_with_a_command_and_an_mcp_call_in_the_turn():
    client = silent_mcp()
    async with client:
        server = client.server_pid
        agent = shell_agent(
            [calls(("shell", {"command": LONG}), ("raw_ok", {})), "x"],
            tools=[CLITool(["sleep", "echo"], timeout=60), *(await client.load_tools())],
        )
        task = asyncio.create_task(agent.arun("go"))
        seen = await cancel_when_running([task], 1)
        assert_all_gone(seen)
        await next_run_works()
    assert_all_gone(seen)
    poll(lambda: server not in {p.pid for p in descendants(os.getpid())}, "the MCP server exited")


async def test_cancelling_a_run_with_only_an_mcp_call_in_flight_leaves_no_process(tmp_path):
    before = {p.pid for p in descendants(os.getpid())}
    seen = tmp_path / "seen"
    async with silent_mcp(seen) as client:
        agent = Agent(
            "mcp-agent",
            ScriptedLLM([call("raw_ok", {}), "x"]),
            tools=await client.load_tools(),
            confirm=approve,
        )
        task = asyncio.create_task(agent.arun("go"))
        # Cancelled once the server has the call, not before the run got to send it.
        await asyncio.to_thread(poll, seen.exists, "the call reached the server", 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.connected  # the session survives the cancelled call
    poll(lambda: {p.pid for p in descendants(os.getpid())} <= before, "no process of the run is left")
    await next_run_works()


async def test_a_run_cancelled_through_wait_for_kills_the_command():
    agent = shell_agent([call("shell", {"command": LONG}), "x"])
    outer = asyncio.ensure_future(asyncio.wait_for(agent.arun("go"), 60))
    assert_all_gone(await cancel_when_running([outer], 1))


async def test_cancelling_aexecute_tool_kills_the_command():
    reg = ToolRegistry()
    reg.register(CLITool(["sleep"], timeout=60))
    task = asyncio.create_task(reg.aexecute_tool("shell", {"command": LONG}))
    assert_all_gone(await cancel_when_running([task], 1))


async def finish(agent: Agent, entry: str):
    return await agent.arun("go") if entry == "async" else await asyncio.to_thread(agent.run, "go")


@pytest.mark.parametrize("entry", ["sync", "async"])
async def test_the_commands_own_timeout_kills_it_and_the_next_run_works(entry):
    agent = shell_agent([call("shell", {"command": LONG}), "after"], tools=[CLITool(["sleep"], timeout=0.5)])
    result = await finish(agent, entry)
    assert result.final_output == "after"
    rec = result.tool_calls[0]
    assert rec.status == "error" and "timed out" in rec.output, rec.output
    assert_no_sleepers()
    await next_run_works()


@pytest.mark.parametrize("entry", ["sync", "async"])
async def test_an_agent_tool_timeout_kills_the_command(entry):
    """The agent's ``tool_timeout``, shorter than the command's own 60 s, abandons the call and
    the command with it."""
    result = await finish(shell_agent([call("shell", {"command": LONG}), "after"], tool_timeout=0.5), entry)
    assert result.final_output == "after"
    assert result.tool_calls[0].status == "timeout"
    assert_no_sleepers()
    await next_run_works()


@pytest.mark.parametrize("entry", ["sync", "async"])
async def test_a_run_deadline_inside_a_command_kills_it(entry):
    agent = shell_agent(
        [call("shell", {"command": LONG}), "after"], run_policy=RunPolicy(deadline_seconds=0.5)
    )
    with pytest.raises(RunLimitExceeded, match="wall-clock"):
        await finish(agent, entry)
    assert_no_sleepers()
    await next_run_works()
