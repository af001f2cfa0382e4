"""The MCP client and processes: a hard exit, Ctrl-C, and forks never leave a server running
or touch the parent's servers."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from forked_script import run_forked
from proc_table import gone

EXIT_WITH_CALLS_IN_FLIGHT = """
import asyncio, sys
sys.path.insert(0, {tests!r})
from mcp_support import LoopWithoutReaders, by_remote, sdk_client

async def main():
    client = sdk_client(timeout=None)
    await client.__aenter__()
    slow = by_remote(await client.load_tools())["slow_write"]
    futures = [slow._arun_on_loop({{"path": "/dev/null", "seconds": 0.03 * (i % 5)}}) for i in range(60)]
    await asyncio.sleep(0.05)
    print("exiting", flush=True)

loop = LoopWithoutReaders()
loop.run_until_complete(main())
loop.close()
"""


HARD_EXIT = """
import asyncio, os, sys
sys.path.insert(0, {tests!r})
from mcp_support import raw_client

async def main():
    client = raw_client("ignore_eof", timeout=10)
    await client.__aenter__()
    print(client.server_pid, flush=True)
    os._exit(0)

asyncio.run(main())
"""


def test_a_hard_exit_does_not_leave_the_server_running(tmp_path):
    """os._exit with the client open: no close runs, and this server ignores the end of its
    input, yet the kernel kills it with the process that started it."""
    script = tmp_path / "hard_exit.py"
    script.write_text(HARD_EXIT.format(tests=str(Path(__file__).parent)))
    done = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    pid = int(done.stdout)
    if not gone([pid]):
        os.kill(pid, 9)
        pytest.fail("the server outlived the process that started it")


HARD_EXIT_WITH_A_GRANDCHILD = """
import asyncio, os, sys
sys.path.insert(0, {tests!r})
from mcp_support import by_remote, sdk_client

async def main():
    client = sdk_client(timeout=10)
    await client.__aenter__()
    sleeper = (await by_remote(await client.load_tools())["spawn_sleeper"].arun({{}})).text
    print(client.server_pid, sleeper, flush=True)
    os._exit(0)

asyncio.run(main())
"""


def test_a_hard_exit_takes_what_the_server_started_with_it(tmp_path):
    """The kernel's parent-death signal reaches only the server; what the server started (here
    a sleeping grandchild in its process group) is killed by the group's guard, which sees
    this process's end as the end of its input."""
    script = tmp_path / "hard_exit.py"
    script.write_text(HARD_EXIT_WITH_A_GRANDCHILD.format(tests=str(Path(__file__).parent)))
    done = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    server, sleeper = map(int, done.stdout.split())
    survivors = [pid for pid in (server, sleeper) if not gone([pid])]
    for pid in survivors:
        os.kill(pid, 9)
    assert survivors == [], "these outlived the process that started the server"


FORK_AND_EXIT = """
import asyncio, os, sys
sys.path.insert(0, {tests!r})
from mcp_support import by_remote, sdk_client

async def main():
    client = sdk_client(timeout=10)
    await client.__aenter__()
    add = by_remote(await client.load_tools())["add"]
    pid = os.fork()
    if pid == 0:
        sys.exit(0)  # the child's interpreter shuts down normally, dropping its copy of the client
    os.waitpid(pid, 0)
    print((await add.arun({{"a": 2, "b": 3}})).text, flush=True)
    await client.aclose()

asyncio.run(main())
"""


def test_a_forked_child_that_exits_leaves_the_parents_server_alone(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(FORK_AND_EXIT.format(tests=str(Path(__file__).parent)))
    done = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "5\n"


def test_exiting_with_calls_in_flight_on_a_loop_without_readers_does_not_crash(tmp_path):
    """Answers arriving while the interpreter shuts down are dropped, not delivered by a thread
    that takes the GIL during finalization (that crashed 7 runs in 30 with pyo3-async-runtimes'
    futures)."""
    script = tmp_path / "exit.py"
    script.write_text(EXIT_WITH_CALLS_IN_FLIGHT.format(tests=str(Path(__file__).parent)))
    for _ in range(6):
        done = subprocess.run(
            [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout == "exiting\n"


CTRL_C_DURING_A_SYNC_CALL = """
import asyncio, signal, sys, time
# Started in the background (as CI runs), a process inherits SIGINT ignored and Python then
# installs no KeyboardInterrupt handler: put back the one a terminal program has.
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {tests!r})
from agentmaker import ToolRegistry
from mcp_support import by_remote, sdk_client

client = sdk_client(timeout=None)


async def enter():
    await client.__aenter__()
    return by_remote(await client.load_tools())["slow_write"]


async def close():
    await client.aclose()


slow = asyncio.run(enter())
reg = ToolRegistry()
reg.register(slow)
print("calling", flush=True)
try:
    reg.execute_tool(slow.name, {{"path": {marker!r}, "seconds": 3, "started": {marker!r} + ".started"}})
except KeyboardInterrupt:
    print(f"interrupted at {{time.monotonic()!r}}", flush=True)
assert reg.execute_tool(slow.name, {{"path": "/dev/null", "seconds": 0}}).text == "finished"
asyncio.run(close())
"""


def test_ctrl_c_interrupts_a_sync_call_and_cancels_it_at_the_server(tmp_path):
    """A sync execute_tool waiting on an MCP server (no client timeout) gives way to Ctrl-C
    (the wait looks for a signal every 50 ms; the test allows 1 s of a loaded machine against
    the 3 s call): KeyboardInterrupt is raised, the server is told, the session goes on.

    SIGINT is sent once the server has the call (it creates a file), and the delay is measured
    from the signal to the interruption (time.monotonic is one clock for every process here),
    so a busy machine's slow start-up does not count; the 3 s call would otherwise run on for
    seconds."""
    marker = tmp_path / "marker"
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C_DURING_A_SYNC_CALL.format(tests=str(Path(__file__).parent), marker=str(marker)))
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline() == "calling\n"
        started = tmp_path / "marker.started"
        deadline = time.monotonic() + 30
        while not started.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the call never reached the server"
            time.sleep(0.01)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-2000:]
    interrupted = re.fullmatch(r"interrupted at (\d+\.\d+)\n", out)
    assert interrupted, out
    assert float(interrupted[1]) - sent < 1.0
    time.sleep(3)
    assert not marker.exists()


FORKED_CHILD = """
import asyncio, os, sys, threading, time
sys.path.insert(0, {tests!r})
from mcp_support import by_remote, raw_client
from agentmaker import CLITool, ToolRegistry

# The parent's client runs on a loop in a thread, with a call in flight at the fork.
loop = asyncio.new_event_loop()
opened = threading.Event()
state = {{}}

async def parent_side():
    async with raw_client("plain") as client:
        state["client"] = client
        (state["ok"],) = await client.load_tools()
        assert (await state["ok"].arun({{}})).text == "fine (ok)"
        opened.set()
        while not state.get("stop"):
            assert (await state["ok"].arun({{}})).text == "fine (ok)"
        state["after"] = (await state["ok"].arun({{}})).text

threading.Thread(target=loop.run_until_complete, args=(parent_side(),), daemon=True).start()
assert opened.wait(30)
registry = ToolRegistry()
registry.register(state["ok"])

pid = os.fork()
if pid == 0:
    out = []
    try:
        start = time.monotonic()
        # The parent's tool: a clear error at once (its connection is the parent's), async
        # and sync, and closing the parent's client here leaves the parent's server alone.
        out.append(asyncio.run(state["ok"].arun({{}})).text)
        out.append(registry.execute_tool(state["ok"].name, {{}}).text)
        async def reuse(method):
            try:
                await getattr(state["client"], method)()
            except Exception as exc:  # noqa: BLE001
                return str(exc)
        out.append([asyncio.run(reuse(m)) for m in ("load_tools", "__aenter__")])
        asyncio.run(state["client"].aclose())
        out.append(round(time.monotonic() - start))
        # A client opened here works, and so does an async shell call.
        async def own():
            async with raw_client("plain") as client:
                (ok,) = await client.load_tools()
                return (await ok.arun({{}})).text, (await CLITool(["echo"]).arun({{"command": "echo hi"}})).text
        out.append(asyncio.run(asyncio.wait_for(own(), 30)))
        print(repr(out), flush=True)
    finally:
        os._exit(0)

_, status = os.waitpid(pid, 0)
state["stop"] = True
deadline = time.monotonic() + 30
while "after" not in state and time.monotonic() < deadline:
    time.sleep(0.05)
print(repr((status, state.get("after"))), flush=True)
os._exit(0)
"""


def test_a_forked_child_opens_its_own_clients_and_leaves_the_parents_alone(tmp_path):
    """os.fork (and multiprocessing's fork start method) copies no thread: the runtime that
    served the parent's clients has none in the child. A client opened in the child hung for
    ever, whatever its timeout; the parent's tools there waited for their timeout, and closing
    the parent's client there would have killed the parent's server."""
    child, parent = run_forked(tmp_path, FORKED_CHILD, timeout=120)
    forked = (
        "Error: this MCP tool's client was opened before this process was forked, and its "
        "connection belongs to the parent process; open a new MCPClient in this process."
    )
    assert child[:2] == [forked, forked]
    client_forked = (
        "this MCPClient was opened before this process was forked, and its connection belongs "
        "to the parent process; open a new MCPClient in this process"
    )
    assert child[2] == [client_forked, client_forked]
    assert child[3] == 0, "the parent's tool and client answered at once in the child"
    assert child[4] == ("fine (ok)", "[exit code 0]\nstdout:\nhi")
    assert parent == (0, "fine (ok)"), "the parent's client kept working through the fork"


FORKED_IN_A_COROUTINE = """
import asyncio, os, sys
sys.path.insert(0, {tests!r})
from mcp_support import raw_client

async def main():
    async with raw_client("plain") as client:
        (ok,) = await client.load_tools()
        pid = os.fork()
        if pid == 0:
            out = []
            for make in (lambda: raw_client("plain").__aenter__(), lambda: ok.arun({{}})):
                try:
                    await make()
                    out.append("no error")
                except BaseException as exc:
                    out.append(f"{{type(exc).__name__}}: {{exc}}")
            print(repr(out), flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        print(repr((await ok.arun({{}})).text), flush=True)

asyncio.run(main())
"""


def test_a_child_forked_inside_a_coroutine_gets_asyncios_error(tmp_path):
    """A child forked inside a coroutine goes on running its parent's loop, which asyncio no
    longer counts as running there: the client's and tools' methods said so only after
    recursing into themselves until a RecursionError."""
    child, parent = run_forked(tmp_path, FORKED_IN_A_COROUTINE, timeout=60)
    assert child == ["RuntimeError: no running event loop"] * 2
    assert parent == "fine (ok)"
