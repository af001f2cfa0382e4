"""MCP calls as coroutines: when they are sent, cancellation reaching the server, and calls
across event loops, including loops that cannot watch file descriptors."""

from __future__ import annotations

import asyncio
import gc
import select
import threading
import time

import pytest
from agentmaker import MCPClient, MCPTool, ToolRegistry, tool
from mcp_support import (
    NO_SESSION,
    LoopWithoutReaders,
    by_remote,
    check_wait_for_cancels_at_the_server,
    sdk_client,
    slow_write_args,
    until_started,
    wait_started,
    wait_until,
)
from proc_table import gone
from timeout_once_started import wait_for_once_started


async def test_cancelling_a_call_cancels_it_at_the_server(tmp_path):
    """asyncio.wait_for, a cancelled task and an agent's tool timeout all reach the server as
    notifications/cancelled: the slow tool never writes its marker, and the session goes on.
    The client has no timeout of its own, so only the caller's cancellation can stop them.
    Each cancellation but the agent's comes once the server has started the call."""
    from agentmaker import Agent
    from agentmaker.testing import ScriptedLLM

    markers = [tmp_path / f"m{i}" for i in range(7)]
    async with sdk_client(timeout=None) as client:
        tools = await client.load_tools()
        t = by_remote(tools)
        slow = t["slow_write"]
        # Through the registry, which sends the call while validating it.
        reg = ToolRegistry()
        reg.register(slow)

        async def timed_out(awaitable, marker):
            with pytest.raises(TimeoutError):
                await wait_for_once_started(awaitable, lambda: until_started(marker), 0.3)

        await timed_out(reg.aexecute_tool(slow.name, slow_write_args(markers[4], 3)), markers[4])
        await timed_out(slow.arun(slow_write_args(markers[0], 3)), markers[0])

        async def in_a_task():
            return await slow.arun(slow_write_args(markers[1], 3))

        task = asyncio.create_task(in_a_task())
        await until_started(markers[1])
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # A task made straight over arun()'s coroutine, and a TaskGroup task over
        # aexecute_tool's.
        task = asyncio.create_task(slow.arun(slow_write_args(markers[5], 3)))
        await until_started(markers[5])
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        async def group():
            async with asyncio.TaskGroup() as tg:
                tg.create_task(reg.aexecute_tool(slow.name, slow_write_args(markers[6], 3)))

        await timed_out(group(), markers[6])
        # The agent's tool timeout is kept by the core's own clock: it starts with the call.
        start = time.monotonic()
        call = ScriptedLLM.tool_call("calc_slow_write", {"path": str(markers[2]), "seconds": 3})
        agent = Agent(
            "a", ScriptedLLM([call, "done"]), tools=tools, confirm=lambda tool, params: True, tool_timeout=0.3
        )
        (rec,) = (await agent.arun("go")).tool_calls
        assert rec.status == "timeout"
        # The sync run() path, from a thread without a loop: the same.
        call = ScriptedLLM.tool_call("calc_slow_write", {"path": str(markers[3]), "seconds": 3})
        agent = Agent(
            "a", ScriptedLLM([call, "done"]), tools=tools, confirm=lambda tool, params: True, tool_timeout=0.3
        )
        (rec,) = (await asyncio.to_thread(agent.run, "go")).tool_calls
        assert rec.status == "timeout"
        # A call nobody cancels still runs to the end, on the same session.
        done = tmp_path / "done"
        assert (await slow.arun({"path": str(done), "seconds": 0.01})).text == "finished"
        assert done.read_text() == "finished"
        await wait_until(start + 4.5)
        assert [m.exists() for m in markers] == [False] * 7
        assert (await t["add"].arun({"a": 1, "b": 1})).text == "2"


async def test_an_mcp_call_is_a_coroutine():
    """What arun and aexecute_tool return for an MCP tool is a coroutine like any other:
    create_task, TaskGroup, gather, wait_for take it; asyncio.wait refuses it, as it refuses
    every coroutine; the client's methods are coroutines too."""
    import inspect

    async with sdk_client() as client:
        listing = client.load_tools()
        assert inspect.iscoroutine(listing)
        tools = await listing
        add = by_remote(tools)["add"]
        reg = ToolRegistry()
        reg.register_all(tools)
        assert inspect.iscoroutinefunction(reg.aexecute_tool)
        call = reg.aexecute_tool(add.name, {"a": 2, "b": 3})
        one = add.arun({"a": 1, "b": 1})
        assert inspect.iscoroutine(call) and inspect.iscoroutine(one)
        assert (await call).text == "5" and (await one).text == "2"
        assert (await asyncio.create_task(add.arun({"a": 1, "b": 1}))).text == "2"
        loop = asyncio.get_running_loop()
        assert (await loop.create_task(reg.aexecute_tool(add.name, {"a": 1, "b": 2}))).text == "3"
        async with asyncio.TaskGroup() as tg:
            grouped = [tg.create_task(reg.aexecute_tool(add.name, {"a": i, "b": 0})) for i in range(5)]
        assert [g.result().text for g in grouped] == ["0", "1", "2", "3", "4"]
        calls = [reg.aexecute_tool(add.name, {"a": i, "b": i}) for i in range(100)]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert [r.text for r in results] == [str(2 * i) for i in range(100)]
        assert (await asyncio.wait_for(reg.aexecute_tool(add.name, {"a": 4, "b": 4}), 5)).text == "8"
        # Refused arguments and unknown tools come back as error responses, not exceptions.
        assert "not of type" in (await reg.aexecute_tool(add.name, {"a": "x", "b": 1})).text
        assert (await reg.aexecute_tool("nope", {})).is_error
        refused = add.arun({"a": 1, "b": 1})
        with pytest.raises(TypeError, match="coroutines is forbidden"):
            await asyncio.wait([refused])
        refused.close()
        done, _ = await asyncio.wait([asyncio.create_task(add.arun({"a": 1, "b": 2}))])
        assert done.pop().result().text == "3"


async def test_an_mcp_call_is_sent_when_its_coroutine_runs(tmp_path):
    """Like any coroutine, what arun and aexecute_tool return for an MCP tool does nothing
    until it runs (awaited, gathered, run as a task); one cancelled or closed before it starts
    never sends its call; one given up on while running cancels it at the server."""
    async with sdk_client(timeout=None) as client:
        tools = await client.load_tools()
        t = by_remote(tools)
        slow = t["slow_write"]
        reg = ToolRegistry()
        reg.register_all(tools)

        def marker_call(marker, seconds=0.01):
            return reg.aexecute_tool(slow.name, slow_write_args(marker, seconds))

        unawaited, later = marker_call(tmp_path / "unawaited"), marker_call(tmp_path / "later")
        await asyncio.sleep(0.5)
        assert not (tmp_path / "later").exists()
        assert (await later).text == "finished" and (tmp_path / "later").exists()
        unawaited.close()
        # Cancelled before the task's first step: nothing was sent, nothing runs.
        for made in (
            marker_call(tmp_path / "never"),
            slow.arun({"path": str(tmp_path / "never2"), "seconds": 0}),
        ):
            task = asyncio.create_task(made)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        # Cancelled once running: the server is told to stop.
        task = asyncio.create_task(slow.arun(slow_write_args(tmp_path / "stopped", 1)))
        await until_started(tmp_path / "stopped")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        slow.arun({"path": str(tmp_path / "closed"), "seconds": 0}).close()
        # The arguments are checked when the call is sent, so a change before then is seen.
        params = {"a": 1, "b": 1}
        pending = reg.aexecute_tool(t["add"].name, params)
        params["b"] = "two"
        assert "not of type" in (await pending).text
        # The tool replaced by a local one before the call runs: the local one runs.
        pending = reg.aexecute_tool(t["add"].name, {"a": 1, "b": 1})

        @tool(name=t["add"].name)
        async def local_add(a: int, b: int) -> str:
            """Local."""
            return f"local {a + b}"

        reg.register(local_add, overwrite=True)
        assert (await pending).text == "local 2"
        reg.register(t["add"], overwrite=True)
        # A gather or wait_for given up on cancels the calls at the server.
        assert not (await asyncio.gather(marker_call(tmp_path / "gathered")))[0].is_error
        gave_up = [tmp_path / f"gave_up{i}" for i in range(3)]
        gathered = asyncio.gather(*(marker_call(m, seconds=1) for m in gave_up))
        await until_started(*gave_up)
        gathered.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gathered
        no_time = tmp_path / "no_time"
        with pytest.raises(TimeoutError):
            await wait_for_once_started(marker_call(no_time, seconds=1), lambda: until_started(no_time), 0.2)
        await asyncio.sleep(2)
        gone = (
            "unawaited",
            "never",
            "never2",
            "stopped",
            "closed",
            "gave_up0",
            "gave_up1",
            "gave_up2",
            "no_time",
        )
        assert [n for n in gone if (tmp_path / n).exists()] == []
        assert (tmp_path / "gathered").exists()
        assert (await t["add"].arun({"a": 1, "b": 1})).text == "2"


async def test_an_mcp_call_made_on_one_loop_runs_on_another(tmp_path):
    """A coroutine made while one loop runs runs on whichever loop runs it (asyncio.run in a
    thread, run_coroutine_threadsafe), and cancelling it there cancels the call at the server."""
    async with sdk_client() as client:
        reg = ToolRegistry()
        reg.register_all(await client.load_tools())
        name = by_remote(reg.list_tools())["add"].name
        assert (await asyncio.to_thread(asyncio.run, reg.aexecute_tool(name, {"a": 1, "b": 2}))).text == "3"
        pending = reg.aexecute_tool(name, {"a": 2, "b": 2})

        async def gathers_it():
            return await asyncio.gather(pending)

        assert [r.text for r in await asyncio.to_thread(asyncio.run, gathers_it())] == ["4"]
        other = asyncio.new_event_loop()
        runner = threading.Thread(target=other.run_forever)
        runner.start()
        try:
            made_here = reg.aexecute_tool(name, {"a": 3, "b": 3})
            moved = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(made_here, other))
            assert (await moved).text == "6"
            marker = tmp_path / "moved"
            slow = by_remote(reg.list_tools())["slow_write"]
            call = reg.aexecute_tool(slow.name, slow_write_args(marker, 1))
            moved = asyncio.run_coroutine_threadsafe(call, other)
            await until_started(marker)
            moved.cancel()
            await asyncio.sleep(1.5)
            assert not marker.exists()
        finally:
            other.call_soon_threadsafe(other.stop)
            runner.join()
            other.close()


def wait_answer_queued(loop: asyncio.AbstractEventLoop, bound: float = 30.0) -> None:
    """Blocks (the loop with it) until the pipe the client wakes ``loop`` through, its one reader
    besides the loop's own wake-up socket, is readable: an answer is queued for the loop."""
    own = loop._ssock.fileno()  # type: ignore[attr-defined]
    pipes = [key.fd for key in loop._selector.get_map().values() if key.fd != own]  # type: ignore[attr-defined]
    assert len(pipes) == 1, pipes
    deadline = time.monotonic() + bound
    while not select.select(pipes, [], [], 0.01)[0]:
        assert time.monotonic() < deadline, f"no answer was queued for the loop within {bound:g} s"


async def test_cancelling_after_the_answer_arrived_changes_nothing():
    async with sdk_client() as client:
        add = by_remote(await client.load_tools())["add"]
        waiter = add._arun_on_loop({"a": 2, "b": 3})  # the call's own future
        # The loop is blocked: the answer arrives and is queued for the loop, but the future is
        # not settled yet, so the cancellation wins and the queued answer is dropped.
        wait_answer_queued(asyncio.get_running_loop())
        assert not waiter.done()
        assert waiter.cancel() and waiter.cancelled()
        await asyncio.sleep(0.05)
        results = await asyncio.gather(*(add.arun({"a": i, "b": 1}) for i in range(20)))
        assert [r.text for r in results] == [str(i + 1) for i in range(20)]
        # A settled call is not cancelled.
        done = add._arun_on_loop({"a": 1, "b": 1})
        assert (await done).text == "2" and not done.cancel()


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, lambda: LoopWithoutReaders()])
def test_cancelling_on_a_closed_loop_still_tells_the_server(tmp_path, loop_factory):
    """The loop is closed with the call pending and a done-callback attached: cancel() marks the
    future cancelled and then fails to schedule the callback; the server must still be told.
    The same on a loop that cannot watch our pipe."""
    marker = tmp_path / "marker"
    client = sdk_client(timeout=None)

    async def start():
        await client.__aenter__()
        slow = by_remote(await client.load_tools())["slow_write"]
        return slow._arun_on_loop(slow_write_args(marker, 2))  # the call's own future

    async def close():
        await client.aclose()

    loop = loop_factory()
    try:
        waiter = loop.run_until_complete(start())
        wait_started(marker)  # the server runs the call
        waiter.add_done_callback(lambda _: None)
        loop.close()
        with pytest.raises(RuntimeError, match="closed"):
            waiter.cancel()
        assert waiter.cancelled()
        time.sleep(3)
        assert not marker.exists()
    finally:
        loop.close()
        asyncio.run(close())


def test_a_loop_that_cannot_watch_our_pipe_still_calls_and_cancels(tmp_path):
    """Without add_reader the futures are settled with call_soon_threadsafe: listing, calls,
    errors, concurrency, cancellation (the server hears of it) and closing all work."""
    marker = tmp_path / "marker"
    task_marker = tmp_path / "task_marker"

    async def main():
        async with sdk_client(timeout=None) as client:
            t = by_remote(await client.load_tools())
            waiter = t["add"]._arun_on_loop({"a": 2, "b": 3})
            assert type(waiter) is asyncio.Future
            assert (await waiter).text == "5"

            async def slow_call():
                return await t["slow_write"].arun(slow_write_args(task_marker, 2))

            task = asyncio.create_task(slow_call())
            await until_started(task_marker)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            results = await asyncio.gather(*(t["add"].arun({"a": i, "b": 1}) for i in range(30)))
            assert [r.text for r in results] == [str(i + 1) for i in range(30)]
            bad = await t["add"].arun({"a": "x", "b": 1})
            assert bad.status == "error"
            await check_wait_for_cancels_at_the_server(t, marker)
            assert not task_marker.exists()
            pid = client.server_pid
        assert gone([pid])
        assert (await t["add"].arun({"a": 1, "b": 1})).text.startswith(NO_SESSION)

    loop = LoopWithoutReaders()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


async def test_a_cancelled_call_does_not_disturb_later_ones():
    async with sdk_client() as client:
        t = by_remote(await client.load_tools())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(t["sleep"].arun({"seconds": 1.0}), 0.1)
        await asyncio.sleep(1.5)  # the abandoned call finishes meanwhile and is dropped
        results = await asyncio.gather(*(t["add"].arun({"a": i, "b": i}) for i in range(10)))
        assert [r.text for r in results] == [str(2 * i) for i in range(10)]


def connect_in_a_loop_of_its_own() -> tuple[MCPClient, dict[str, MCPTool]]:
    """A client connected (and its tools loaded) by one asyncio.run, for use from others."""

    async def load():
        client = sdk_client()
        await client.__aenter__()
        return client, by_remote(await client.load_tools())

    return asyncio.run(load())


def test_calls_work_across_event_loops():
    client, tools = connect_in_a_loop_of_its_own()
    try:
        # A second loop (asyncio.run again) and the sync path share the same connection.
        async def call():
            return await tools["add"].arun({"a": 1, "b": 2})

        assert asyncio.run(call()).text == "3"
        reg = ToolRegistry()
        reg.register(tools["add"])
        assert reg.execute_tool("calc_add", {"a": 5, "b": 5}).text == "10"
    finally:

        async def close():
            await client.aclose()

        asyncio.run(close())
    assert not client.connected


def test_a_loop_closed_with_calls_pending_is_freed():
    """A loop that ends while MCP calls are still out is not kept alive by them (nor is its
    completion pipe), once another loop makes a call."""
    import weakref

    client, tools = connect_in_a_loop_of_its_own()
    try:
        loops = []

        async def abandon():
            loops.append(weakref.ref(asyncio.get_running_loop()))
            # Sent, never awaited: the loop closes while the server is still sleeping.
            tools["sleep"]._arun_on_loop({"seconds": 2.0})
            tools["sleep"]._arun_on_loop({"seconds": 2.0})

        asyncio.run(abandon())

        async def call():
            return await tools["add"].arun({"a": 1, "b": 2})

        assert asyncio.run(call()).text == "3"
        gc.collect()
        # Freed, and with it its completion queue and pipe.
        assert loops[0]() is None, "the closed loop is still referenced"
    finally:

        async def close():
            await client.aclose()

        asyncio.run(close())
