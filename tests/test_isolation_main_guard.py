"""An isolated tool called from a script's unguarded top-level code: a worker would import the
script again and re-run that code, so the first call gives a one-line error naming the line and
the fix (``if __name__ == "__main__":``) instead of multiprocessing's bootstrapping error.
Each script runs as a real subprocess and counts its own runs in a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAD = '''\
import asyncio, sys, threading
from agentmaker import Agent, ToolRegistry, tool
from agentmaker.isolation import warm_up
from agentmaker.testing import ScriptedLLM

with open(sys.argv[1], "a") as runs:
    runs.write("ran\\n")


@tool(isolate=True)
def double(x: int) -> int:
    """Double x."""
    return 2 * x


reg = ToolRegistry()
reg.register(double)
'''

FIX = 'put that code under if __name__ == "__main__":'

CALLS = {
    "execute_tool": 'print(reg.execute_tool("double", {"x": 2}).text)',
    "aexecute_tool": 'print(asyncio.run(reg.aexecute_tool("double", {"x": 2})).text)',
    "agent": (
        'llm = ScriptedLLM([ScriptedLLM.tool_call("double", {"x": 2}), "done"])\n'
        'print(Agent("a", llm, tools=reg).run("go").tool_calls[0].output)'
    ),
}


def run(tmp_path: Path, body: str) -> tuple[subprocess.CompletedProcess[str], Path, int]:
    script = tmp_path / "host.py"
    script.write_text(HEAD + body + "\n")
    runs = tmp_path / "runs"
    line = len((HEAD + body).splitlines())
    proc = subprocess.run(
        [sys.executable, str(script), str(runs)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    return proc, runs, line


@pytest.mark.parametrize("call", sorted(CALLS))
def test_unguarded_calls_get_one_line_naming_the_fix(tmp_path, call):
    proc, runs, line = run(tmp_path, CALLS[call])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    assert out == (
        f"Error: tool 'double' could not run in a worker process: line {line} of {tmp_path / 'host.py'} "
        "calls it from the script's top-level code, which every worker process would run again when "
        f"it imports the script; {FIX}"
    )
    assert "bootstrapping" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    # No worker was started: the script ran once.
    assert runs.read_text() == "ran\n"


def test_warm_up_at_top_level_raises_naming_the_fix(tmp_path):
    proc, runs, line = run(tmp_path, "warm_up()")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "agentmaker.errors.ToolConfigError: warm_up() is called from the main script's top-level code "
        f"(line {line} of {tmp_path / 'host.py'}), which every worker process would run again; {FIX}"
    )
    assert runs.read_text() == "ran\n"


def test_a_call_from_another_thread_is_caught_in_the_worker(tmp_path):
    body = (
        "out = []\n"
        't = threading.Thread(target=lambda: out.append(reg.execute_tool("double", {"x": 2}).text))\n'
        "t.start()\nt.join()\nprint(out[0])"
    )
    proc, runs, _ = run(tmp_path, body)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"Error: tool 'double' could not run in a worker process: {tmp_path / 'host.py'} calls it from "
        "the script's top-level code, which every worker process would run again when it imports the "
        f"script; {FIX}"
    )
    assert "bootstrapping" not in proc.stderr, proc.stderr
    # The worker re-ran the script up to the call and left there, before running the tool.
    assert runs.read_text() == "ran\nran\n"


@pytest.mark.parametrize("call", sorted(CALLS))
def test_guarded_scripts_work(tmp_path, call):
    body = 'if __name__ == "__main__":\n' + "".join(f"    {ln}\n" for ln in CALLS[call].splitlines())
    proc, runs, _ = run(tmp_path, body.rstrip("\n"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "4"
    # The worker imported the script (for its definitions) without running the guarded code.
    assert runs.read_text() == "ran\nran\n"
