"""What a type checker sees of the public API: mypy --strict accepts the intended uses and
reports the misuses, and tests/typing_usage.py (the checked tour of the API) also runs.

One mypy run (module fixture) checks the examples, typing_usage.py and the two snippets below.
Each line of MISUSE carries ``# E: <text>``: mypy must report an error containing that text on
that line, and nowhere else.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import agentmaker
import pytest
from conftest import REPO

USAGE = REPO / "tests" / "typing_usage.py"

# A cold mypy --strict run (its cache is new each time) is CPU work of some 20 s on an idle
# two-core machine and several times that on a busy one. The subprocesses' own 300 s bound
# stops a hang; pytest's default 120 s would stop a slow but working run first.
pytestmark = pytest.mark.timeout(400)

PRELUDE = '''\
from typing import Annotated

from agentmaker import Agent, Tool, ToolRegistry, ToolResponse, tool
from agentmaker.testing import ScriptedLLM


@tool
def get_weather(city: Annotated[str, "City name"], days: int = 1) -> str:
    """Look up the weather forecast for a city."""
    return city * days


@tool(name="add_numbers", timeout=5.0)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Uppercase a text."""
    return text.upper()


registry = ToolRegistry()
agent = Agent("a", ScriptedLLM(["ok"]))
result = agent.run("hi")
'''

CORRECT = (
    PRELUDE
    + """
text: str = get_weather("Paris", days=2)
total: int = add(1, b=2)
loud: str = Tool.from_callable(shout, requires_confirmation=True)("x")
again: str = registry.register_callable(shout, name="shout", timeout=2.5)("y")
agent.run([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}])
agent.run([{"type": "text", "text": "hi"}])
done: bool = result.status == "max_turns"
ran: bool = result.tool_calls[0].status == "not_confirmed"
response = ToolResponse.ok("fine")
response.status = "partial"
"""
)

MISUSE = (
    PRELUDE
    + """
get_weather(42)  # E: Argument 1 to "__call__" of "FunctionTool" has incompatible type "int"; expected "str"
get_weather("Paris", day=2)  # E: Unexpected keyword argument "day"
wrong: int = get_weather("Paris")  # E: Incompatible types in assignment (expression has type "str"
add(1, "2")  # E: Argument 2 to "__call__" of "FunctionTool" has incompatible type "str"; expected "int"
Tool.from_callable(shout)(3)  # E: has incompatible type "int"; expected "str"
registry.register_callable(shout, timeout="soon")  # E: Argument "timeout" to "register_callable"
Tool.from_callable(shout, requires_confirmaton=True)  # E: Unexpected keyword argument "requires_confirmaton"
agent.run(42)  # E: No overload variant of "run" of "Agent" matches argument type "int"
agent.run([{"role": "usr", "content": "hi"}])  # E: TypedDict item "role" has type
stopped: bool = result.status == "finished"  # E: Non-overlapping equality check
ok: bool = result.tool_calls[0].status == "sucess"  # E: Non-overlapping equality check
ToolResponse.ok("x").status = "ok"  # E: Incompatible types in assignment (expression has type "Literal['ok']"
"""
)


def _expected_errors(source: str) -> dict[int, str]:
    marks = {}
    for lineno, line in enumerate(source.splitlines(), start=1):
        if "# E: " in line:
            marks[lineno] = line.split("# E: ", 1)[1]
    return marks


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[int, str]]]:
    """Run mypy --strict once over the examples, typing_usage.py and the two snippets."""
    work = tmp_path_factory.mktemp("typing")
    (work / "correct.py").write_text(CORRECT)
    (work / "misuse.py").write_text(MISUSE)
    # mypy checks the agentmaker these tests import (a worktree or the installed wheel).
    package_root = str(Path(agentmaker.__file__).resolve().parent.parent)
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    )
    files = [str(work / "correct.py"), str(work / "misuse.py"), str(USAGE), str(REPO / "examples")]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(work / "cache"),
            "--no-color-output",
            *files,
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2 would be a crash or bad usage
    report: dict[str, list[tuple[int, str]]] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+?):(\d+): error: (.*)", line)
        if m:
            report.setdefault(Path(m[1]).name, []).append((int(m[2]), m[3]))
    return report


def test_mypy_accepts_the_intended_uses(mypy_report: dict[str, list[tuple[int, str]]]) -> None:
    assert mypy_report.get("correct.py", []) == []


def test_mypy_accepts_typing_usage_and_the_examples(mypy_report: dict[str, list[tuple[int, str]]]) -> None:
    others = {name: errs for name, errs in mypy_report.items() if name not in ("correct.py", "misuse.py")}
    assert others == {}


def test_mypy_reports_each_misuse_on_its_line(mypy_report: dict[str, list[tuple[int, str]]]) -> None:
    expected = _expected_errors(MISUSE)
    assert len(expected) == 12
    found: dict[int, list[str]] = {}
    for lineno, message in mypy_report.get("misuse.py", []):
        found.setdefault(lineno, []).append(message)
    assert sorted(found) == sorted(expected), found
    for lineno, fragment in expected.items():
        assert any(fragment in message for message in found[lineno]), (lineno, fragment, found[lineno])


def test_typing_usage_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(USAGE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "typing usage: ok"


def test_typing_usage_uses_every_public_name() -> None:
    tree = ast.parse(USAGE.read_text())
    imported = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "agentmaker"
        for alias in node.names
    }
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert imported == set(agentmaker.__all__)
    assert sorted(imported - used) == []
