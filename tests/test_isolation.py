"""Isolated tools: a timeout, a cancelled run or a crossed limit stops the tool's worker process
(and everything it started), the pool replaces it, and the next call works."""

from __future__ import annotations

import asyncio
import os
import resource
import time
from pathlib import Path

import isolated_tools as tools
import pytest
from agentmaker import Agent, Isolation, RunPolicy, ToolConfigError, ToolRegistrationError, ToolRegistry, tool
from agentmaker.testing import ScriptedLLM
from proc_table import alive, gone
from written import whole_file


def registry(*items) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register_all(list(items))
    return reg


def pids_in(marker) -> list[int]:
    return [int(p) for line in marker.read_text().split("\n") if line for p in line.split()]


def noted_pids(marker: Path) -> list[int]:
    """The pids a running tool notes in ``marker``, once its line is whole: the file exists from
    the tool's open() on, before its write, and a read in between would find it empty."""
    whole_file(marker)
    return pids_in(marker)


def test_an_isolated_tool_runs_in_another_process_and_answers_like_any_tool():
    reg = registry(tools.where, tools.add, tools.fail, tools.async_add, tools.Pid())
    assert int(reg.execute_tool("where", {}).text) != os.getpid()
    assert reg.execute_tool("add", {"a": 2, "b": 3}).text == "5"
    assert reg.execute_tool("add", {"a": 2, "b": 3}).data == 5
    assert asyncio.run(reg.aexecute_tool("add", {"a": 1, "b": 1})).text == "2"
    assert reg.execute_tool("async_add", {"a": 4, "b": 4}).text == "8"
    assert int(reg.execute_tool("class_pid", {}).text) != os.getpid()
    failed = reg.execute_tool("fail", {"message": "no"})
    assert failed.is_error and failed.text == "Error: tool 'fail' raised during execution: ValueError: no"
    # Validation happens before anything is sent to a worker.
    bad = reg.execute_tool("add", {"a": "x", "b": 1})
    assert bad.is_error and "a" in bad.text


def test_a_busy_loop_is_stopped_at_its_timeout(tmp_path):
    marker = tmp_path / "pids"
    reg = registry(tools.spin, tools.add)
    started = time.monotonic()
    resp = reg.execute_tool("spin", {"marker": str(marker)})
    assert time.monotonic() - started < 5  # a thread-based timeout would never come back
    assert resp.is_error and resp.text == "Error: tool 'spin' timed out after 0.2 s; the tool was stopped."
    assert gone(pids_in(marker))
    assert reg.execute_tool("add", {"a": 1, "b": 2}).text == "3"


def test_the_whole_process_group_is_stopped(tmp_path):
    marker = tmp_path / "pids"
    agent = Agent(
        "a",
        ScriptedLLM([ScriptedLLM.tool_call("hang_with_child", {"marker": str(marker)}), "ok"]),
        tools=[tools.hang_with_child],
    )
    result = agent.run("go")
    record = result.tool_calls[0]
    assert record.status == "timeout"
    assert record.output == "Error: tool 'hang_with_child' timed out after 0.3 s; the tool was stopped."
    worker, grandchild = pids_in(marker)
    assert gone([worker, grandchild])


def test_a_hundred_timeouts_leave_no_process_and_no_growth(tmp_path):
    marker = tmp_path / "pids"
    reg = registry(tools.spin)

    @tool(timeout=0.05)
    def unused() -> str:
        """Unused."""
        return ""

    reg.execute_tool("spin", {"marker": str(marker)})  # warm-up: the fork server, the first worker
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss_before = _rss_kb()
    for _ in range(100):
        assert reg.execute_tool("spin", {"marker": str(marker)}).text.endswith("the tool was stopped.")
    pids = pids_in(marker)
    assert len(pids) == 101 and len(set(pids)) == 101
    assert gone(pids, within=10)
    assert _rss_kb() - rss_before < 10_000, (rss_before, _rss_kb(), before)


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def test_memory_cpu_and_file_limits_give_clear_errors_and_the_pool_heals(tmp_path):
    reg = registry(tools.hog, tools.burn, tools.open_many, tools.limited_add)
    resp = reg.execute_tool("hog", {"megabytes": 2000})
    assert resp.text == (
        "Error: tool 'hog' exceeded its memory limit (300 MB); the tool was stopped and the call has no result."
    )
    assert reg.execute_tool("hog", {"megabytes": 10}).text == str(10 * 1024 * 1024)
    resp = reg.execute_tool("burn", {})
    assert resp.text == (
        "Error: tool 'burn' exceeded its CPU time limit (1 s); the tool was stopped and the call has no result."
    )
    resp = reg.execute_tool("open_many", {"directory": str(tmp_path)})
    assert resp.text == (
        "Error: tool 'open_many' exceeded its open-files limit (32); the tool was stopped and the call has no result."
    )
    assert reg.execute_tool("limited_add", {"a": 1, "b": 1}).text == "2"


def test_a_crashed_worker_is_an_error_result_and_is_replaced():
    reg = registry(tools.exit_hard, tools.segfault, tools.add)
    resp = reg.execute_tool("exit_hard", {"code": 3})
    assert (
        resp.text
        == "Error: tool 'exit_hard' ended its worker process (exit status 3); the call has no result."
    )
    assert reg.execute_tool("add", {"a": 1, "b": 1}).text == "2"
    resp = reg.execute_tool("segfault", {})
    assert (
        resp.text
        == "Error: tool 'segfault' ended its worker process (killed by SIGSEGV); the call has no result."
    )
    assert reg.execute_tool("add", {"a": 2, "b": 2}).text == "4"


def test_cancelling_the_run_stops_the_worker(tmp_path):
    marker = tmp_path / "pids"
    agent = Agent(
        "a",
        ScriptedLLM([ScriptedLLM.tool_call("nap", {"marker": str(marker), "seconds": 30}), "ok"]),
        tools=[tools.nap, tools.add],
    )

    async def main():
        task = asyncio.create_task(agent.arun("go"))
        pids = await asyncio.to_thread(noted_pids, marker)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pids

    (worker,) = asyncio.run(main())
    assert gone([worker])
    reg = registry(tools.add)
    assert reg.execute_tool("add", {"a": 1, "b": 2}).text == "3"


def test_a_run_policy_isolates_tools_that_do_not_say_otherwise():
    calls = ScriptedLLM.tool_calls(("plain_where", {}))
    plain = Agent("a", ScriptedLLM([calls, "ok"]), tools=[tools.plain_where]).run("go")
    assert int(plain.tool_calls[0].output) == os.getpid()
    isolated = Agent(
        "a", ScriptedLLM([calls, "ok"]), tools=[tools.plain_where], run_policy=RunPolicy(isolate=True)
    ).run("go")
    assert int(isolated.tool_calls[0].output) != os.getpid()


def test_flow_control_crosses_the_process_boundary():
    agent = Agent(
        "a",
        ScriptedLLM([ScriptedLLM.tool_call("finish_run", {"message": "all done"})]),
        tools=[tools.finish_run],
    )
    result = agent.run("go")
    assert (result.status, result.final_output) == ("stopped", "all done")


def test_a_tool_a_worker_cannot_import_is_refused_at_definition():
    def local(a: int) -> int:
        """Local."""
        return a

    with pytest.raises(ToolConfigError, match="not defined at module level"):
        tool(isolate=True)(local)
    with pytest.raises(ToolConfigError, match="isolate must be True, False, None or an Isolation"):
        tool(isolate="yes")(local)  # type: ignore[call-overload]
    with pytest.raises(ToolConfigError, match="Isolation.memory_mb must be an integer >= 1"):
        Isolation(memory_mb=0)
    reg = ToolRegistry()
    with pytest.raises(ToolRegistrationError, match="register_function tool cannot be sent"):
        reg.register_function(lambda p: p, "f", "F.", isolate=True)


def test_workers_end_with_their_host(tmp_path):
    import subprocess
    import sys

    marker = tmp_path / "pids"
    script = tmp_path / "host.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import isolated_tools as tools\n"
        "from agentmaker import ToolRegistry\n"
        "from agentmaker.isolation import warm_up\n"
        "if __name__ == '__main__':\n"
        "    warm_up()\n"
        "    reg = ToolRegistry()\n"
        "    reg.register(tools.nap)\n"
        f"    reg.execute_tool('nap', {{'marker': {str(marker)!r}, 'seconds': 60}})\n"
    )
    host = subprocess.Popen([sys.executable, str(script)])
    try:
        (worker,) = noted_pids(marker)
        assert alive(worker)
    finally:
        host.kill()
        host.wait()
    # Killed outright, the host runs no clean-up: its fork server sees it gone and ends, and
    # the worker, busy in its call, gets its parent-death signal.
    assert gone([worker], within=10)
