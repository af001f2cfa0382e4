"""Registry figures of issue 20, ours and the pure-Python reference (agentmaker 0.2.0) side by side.

Each side runs in its own subprocess (the two packages share the name ``agentmaker``), the sides
alternate round by round so machine noise hits both alike, and every figure is the best round
(memory: the median). The reference side needs the reference package importable apart from
ours: ``AGENTMAKER_REFERENCE_PATH`` (default ``/tmp/refpkg``, made with ``pip install --no-deps
--python-version 3.12 --only-binary :all: --target /tmp/refpkg agentmaker==0.2.0 jsonschema``)
and a Python it supports, ``AGENTMAKER_REFERENCE_PYTHON`` (default ``python3.12`` on PATH).
Without them only our side is measured, and a note says so.

Usage: python benches/bench_registry_vs_reference.py [--rounds N]
(run.py runs it with one round). Build a release extension first.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import per_call_us  # stdlib only: importable by the reference's Python too

GROUP = "vs-ref"
N_REGISTER = 1000
N_MEMORY = 10_000


TOOL_TEMPLATE = '''
def lookup_{i}(
    query: Annotated[str, "The search keywords ({i})."],
    city: Optional[str] = None,
    limit: Annotated[int, "Maximum number of hits."] = 10,
    exact: bool = False,
    radius_km: Optional[float] = None,
) -> str:
    """Look up places matching a query ({i}).

    Args:
        query: The search keywords.
        city: Only places in this city.
        limit: Maximum number of hits.
        exact: Match the whole query only.
        radius_km: Search radius around the city centre.

    Returns:
        The hits as JSON.
    """
    return query
'''


def _tool_decorator(side: str):
    if side == "ours":
        from agentmaker import tool
    else:
        from agentmaker.tools.decorator import tool
    return tool


def make_functions(n: int, start: int = 0) -> list:
    """`n` distinct five-parameter functions (Annotated, Optional, a Google docstring),
    each with its own docstring, so no per-docstring cache helps."""
    ns: dict = {}
    # dont_inherit: this module's `from __future__ import annotations` must not turn the
    # generated functions' annotations into strings.
    head = "from typing import Annotated, Optional"
    exec(compile(head, "<bench>", "exec", dont_inherit=True), ns)  # noqa: S102
    for i in range(start, start + n):
        exec(compile(TOOL_TEMPLATE.format(i=i), "<bench>", "exec", dont_inherit=True), ns)  # noqa: S102
    return [ns[f"lookup_{i}"] for i in range(start, start + n)]


def _api(side: str):
    if side == "ours":
        from agentmaker import Tool, ToolParameter, ToolRegistry, ToolResponse
    else:
        from agentmaker.tools.base import Tool, ToolParameter
        from agentmaker.tools.registry import ToolRegistry
        from agentmaker.tools.response import ToolResponse
    return Tool, ToolParameter, ToolRegistry, ToolResponse


def _best_us(fn, *, repeat: int, setup=None) -> float:
    samples = []
    for _ in range(repeat):
        state = setup() if setup is not None else None
        start = time.perf_counter_ns()
        fn(state)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return min(samples)


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def worker_times(side: str) -> dict[str, float]:
    Tool, ToolParameter, ToolRegistry, ToolResponse = _api(side)

    def add(a: int, b: int):
        return ToolResponse.ok(str(a + b))

    class AddTool(Tool):
        def __init__(self, name: str) -> None:
            super().__init__(name, "Add two integers.")

        def get_parameters(self):
            return [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

        def run(self, parameters):
            return add(**parameters)

    tools = [AddTool(f"tool_{i}") for i in range(N_REGISTER)]
    register = _best_us(lambda reg: [reg.register(t) for t in tools], repeat=9, setup=ToolRegistry)

    class FixedTool(AddTool):
        """get_parameters() returns a list made once: what registering costs without the tool's
        own work of building ToolParameters (which the reference never asks for at register)."""

        def __init__(self, name: str) -> None:
            super().__init__(name)
            self._params = AddTool.get_parameters(self)

        def get_parameters(self):
            return self._params

    fixed = [FixedTool(f"tool_{i}") for i in range(N_REGISTER)]
    register_fixed = _best_us(lambda reg: [reg.register(t) for t in fixed], repeat=9, setup=ToolRegistry)

    params = [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

    def by_function(reg):
        for i in range(N_REGISTER):
            reg.register_function(lambda p: str(p["a"] + p["b"]), f"fn_{i}", "Add two integers.", params)

    register_function = _best_us(by_function, repeat=9, setup=ToolRegistry)

    tool = _tool_decorator(side)
    decorated = [tool(f) for f in make_functions(N_REGISTER)]
    register_tool = _best_us(lambda reg: [reg.register(t) for t in decorated], repeat=9, setup=ToolRegistry)

    def into_ten(_):
        for _ in range(10):
            reg = ToolRegistry()
            for t in decorated:
                reg.register(t)

    register_ten = _best_us(into_ten, repeat=5)
    definition = min(
        _best_us(
            lambda fs: [tool(f) for f in fs],
            repeat=1,
            setup=lambda r=r: make_functions(N_REGISTER, (r + 1) * N_REGISTER),
        )
        for r in range(5)
    )

    def filled():
        reg = ToolRegistry()
        for t in [tool(f) for f in make_functions(N_REGISTER, 100 * N_REGISTER)]:
            reg.register(t)
        return reg

    first_openai = _best_us(lambda reg: reg.to_openai_schema(), repeat=7, setup=filled)

    reg = ToolRegistry()
    reg.register(AddTool("add"))
    args = {"a": 2, "b": 3}
    floor = per_call_us(lambda: add(**args))
    execute = per_call_us(lambda: reg.execute_tool("add", args), number=20_000 if side == "ours" else 2000)
    return {
        "register_us": register / N_REGISTER,
        "register_fixed_us": register_fixed / N_REGISTER,
        "register_function_us": register_function / N_REGISTER,
        "register_tool_us": register_tool / N_REGISTER,
        "register_tool_ten_us": register_ten / (10 * N_REGISTER),
        "tool_definition_us": definition / N_REGISTER,
        "first_openai_ms": first_openai / 1000,
        "execute_overhead_us": execute - floor,
    }


def worker_memory(side: str, how: str, trace: bool) -> dict[str, float]:
    """KB per tool for N_MEMORY tools, RSS or tracemalloc (Python allocations only)."""
    Tool, ToolParameter, ToolRegistry, ToolResponse = _api(side)

    class AddTool(Tool):
        def __init__(self, name: str) -> None:
            super().__init__(name, f"Add two integers ({name}).")

        def get_parameters(self):
            return [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

        def run(self, parameters):
            return ToolResponse.ok(str(parameters["a"] + parameters["b"]))

    def fill(reg, names):
        for name in names:
            if how == "function":
                params = [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]
                reg.register_function(lambda p: "", name, f"Add two integers ({name}).", params)
            else:
                reg.register(AddTool(name))

    funcs = make_functions(N_MEMORY + 1) if how == "decorated" else []
    if how == "decorated":
        tool = _tool_decorator(side)

        def fill(reg, names):
            for i in range(len(names)):
                reg.register(tool(funcs.pop()))

    fill(ToolRegistry(), ["warm_up"])  # lazy imports and first-use caches are not per tool
    names = [f"tool_{i:05d}" for i in range(N_MEMORY)]
    gc.collect()
    if trace:
        import tracemalloc

        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
    else:
        before = _rss_kb() * 1024
    reg = ToolRegistry()
    fill(reg, names)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] if trace else _rss_kb() * 1024
    assert len(reg.list_tools()) == N_MEMORY
    out = {f"memory_{how}_{'traced' if trace else 'rss'}_kb": (after - before) / 1024 / N_MEMORY}
    if how == "decorated" and not trace:
        reg.to_openai_schema()
        reg.get_tools_description()
        out["peak_rss_mb"] = _peak_rss_kb() / 1024
    return out


def _peak_rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _worker(argv: list[str]) -> None:
    side, what = argv[0], argv[1]
    if what == "times":
        out = worker_times(side)
    else:
        how, mode = what.split(":")
        out = worker_memory(side, how, mode == "traced")
    print(json.dumps(out))


ROWS = [
    ("register_us", "register a prebuilt Tool subclass, µs per tool", 1.0),
    ("register_fixed_us", "register, parameter list built once, µs per tool", 1.0),
    ("register_function_us", "register_function (builds the tool), µs per tool", None),
    ("register_tool_us", "register an @tool function (5 typed params), µs per tool", 0.3),
    ("register_tool_ten_us", "the same 1k @tool tools into 10 registries, µs per register", 0.3),
    ("memory_decorated_rss_kb", "memory per tool, @tool defined + registered, 10k, RSS KB", 1.5),
    ("memory_decorated_traced_kb", "memory per tool, @tool, 10k, tracemalloc KB", None),
    ("peak_rss_mb", "peak RSS, 10k @tool defined, registered, rendered, MB", 86),
    ("memory_function_rss_kb", "memory per tool, register_function, 10k, RSS KB", 1.5),
    ("memory_function_traced_kb", "memory per tool, register_function, 10k, tracemalloc KB", None),
    ("memory_subclass_rss_kb", "memory per tool, Tool subclass, 10k, RSS KB", 1.5),
    ("memory_subclass_traced_kb", "memory per tool, Tool subclass, 10k, tracemalloc KB", None),
    ("first_openai_ms", "first to_openai_schema(), fresh 1k registry, ms", 1.0),
    ("execute_overhead_us", "execute_tool overhead over the raw call, µs", 0.6),
    ("tool_definition_us", "@tool definition (5 typed params), µs per function", 15),
]
JOBS = [
    "times",
    "function:rss",
    "function:traced",
    "subclass:rss",
    "subclass:traced",
    "decorated:rss",
    "decorated:traced",
]


def _reference_python() -> str | None:
    """A Python the reference supports (3.12+) that really starts (a pyenv shim may not)."""
    named = os.environ.get("AGENTMAKER_REFERENCE_PYTHON")
    for candidate in [named] if named else ["python3.12", "python3.13"]:
        path = shutil.which(candidate)
        if path and subprocess.run([path, "-c", ""], check=False, capture_output=True).returncode == 0:
            return path
    return None


def _run_side(cmd: list[str], env: dict[str, str], job: str) -> dict[str, float]:
    done = subprocess.run(cmd + [job], check=False, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} {job} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(rounds: int = 1) -> None:
    here = str(Path(__file__).resolve())
    ours_env = dict(os.environ)
    sides = {"ours": ([sys.executable, here, "--worker", "ours"], ours_env)}
    ref_path = os.environ.get("AGENTMAKER_REFERENCE_PATH", "/tmp/refpkg")
    ref_python = _reference_python()
    if Path(ref_path, "agentmaker", "tools", "registry.py").is_file() and ref_python:
        ref_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        ref_env["PYTHONPATH"] = ref_path
        sides["reference"] = ([ref_python, here, "--worker", "reference"], ref_env)
    else:
        print(
            f"{GROUP:<10} note: reference side skipped (no agentmaker 0.2.0 at {ref_path} "
            "or no python3.12; see this file's docstring)",
            flush=True,
        )
    samples: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
    for _ in range(rounds):
        for job in JOBS:
            for side, (cmd, env) in sides.items():
                for key, value in _run_side(cmd, env, job).items():
                    samples[side].setdefault(key, []).append(value)

    def pick(side: str, key: str) -> tuple[float, float] | None:
        """(best, median) over the rounds; memory's best is its median too."""
        values = samples.get(side, {}).get(key)
        if not values:
            return None
        median = statistics.median(values)
        return (median if key.startswith(("memory", "peak")) else min(values), median)

    print(f"{GROUP:<10} {rounds} round(s); each figure best/median (memory: median)", flush=True)
    for key, label, goal in ROWS:
        ours = pick("ours", key)
        ref = pick("reference", key)
        if ours is None:
            continue
        line = f"{GROUP:<10} {label:<60} ours {ours[0]:9.3f}/{ours[1]:<9.3f}"
        if ref is not None:
            line += f"  reference {ref[0]:9.3f}/{ref[1]:<9.3f}"
        if goal is not None:
            line += f"  goal <= {goal:g} [{'ok' if ours[0] <= goal else 'OVER'}]"
        print(line, flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
    else:
        n = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
        main(n)
