"""Workspace scenarios (issue 33), side by side with their floors in one run.

- ``grep`` in process against the ``rg`` command (same pattern, path, filters and output mode)
  and a Python ``os.walk`` + ``re`` over the ``*.py`` files, on the standard library of the
  Python running the bench;
- ``glob("**/*.py")`` on the same tree against ``glob.glob(recursive=True)``;
- ``read_file`` of a 200-line page at line 5,000 of a 1 MB file;
- ``edit_file`` of one unique string in a 1 MB file against a plain Python read/replace/write.

``rg`` is the binary of the ``ripgrep`` package (the test extra) beside the interpreter, else
the one on PATH; without one, the ``rg`` lines say so. The ``grep`` and ``glob`` lines also give
the CPU time of one call (user and system, all threads; for ``rg``, the child's), which a
loaded machine disturbs less than the wall time: ours runs on every core, ``glob.glob`` on one.
"""

from __future__ import annotations

import glob as pyglob
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

from agentmaker import ToolRegistry, Workspace
from harness import median_us, per_call_us, report

GROUP = "workspace"
PATTERN = r"class \w+\(Exception\)"


def rg_binary() -> str | None:
    beside = Path(sys.executable).parent / "rg"
    return str(beside) if beside.exists() else shutil.which("rg")


def cpu_ms(fn: Callable[[], object], who: int = resource.RUSAGE_SELF, repeat: int = 5) -> float:
    """Median CPU time of one call in ms: user + system, every thread (``RUSAGE_CHILDREN``: the
    commands it ran and waited for)."""
    samples = []
    for _ in range(repeat):
        before = resource.getrusage(who)
        fn()
        after = resource.getrusage(who)
        samples.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(samples)


def registry(ws: Workspace) -> ToolRegistry:
    reg = ToolRegistry()
    for t in ws:
        reg.register(t)
    return reg


def grep_and_glob() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    files = sum(len(f) for _, _, f in os.walk(stdlib))
    print(f"# tree: {stdlib} ({files} files)", flush=True)
    reg = registry(Workspace(stdlib, read_only=True, max_entries=1_000_000, max_output_bytes=100_000_000))
    rg = rg_binary()
    rg_flags = ["--no-require-git", "--no-ignore-parent", "--no-ignore-global"]
    for label, extra_rg, extra_args in [
        ("-c", [], {}),
        ("-c -g '*.py'", ["-g", "*.py"], {"glob": "*.py"}),
    ]:
        args = {"pattern": PATTERN, "output_mode": "count", **extra_args}
        ours = reg.execute_tool("grep", args)
        ours_us = median_us(lambda args=args: reg.execute_tool("grep", args), repeat=5)
        ours_cpu = cpu_ms(lambda args=args: reg.execute_tool("grep", args))
        if rg is None:
            report(GROUP, f"grep {label}: in process", ours_us, note="(no rg binary: install ripgrep)")
            continue
        cmd = [rg, "-c", *rg_flags, *extra_rg, "-e", PATTERN]
        rg_out = subprocess.run(cmd, cwd=stdlib, capture_output=True, check=False).stdout
        rg_lines = len(rg_out.splitlines())
        rg_us = median_us(
            lambda cmd=cmd: subprocess.run(cmd, cwd=stdlib, capture_output=True, check=False), repeat=5
        )
        rg_cpu = cpu_ms(
            lambda cmd=cmd: subprocess.run(cmd, cwd=stdlib, capture_output=True, check=False),
            who=resource.RUSAGE_CHILDREN,
        )
        report(GROUP, f"grep {label}: rg command", rg_us, note=f"{rg_lines} files, CPU {rg_cpu:.0f} ms")
        report(
            GROUP,
            f"grep {label}: in process",
            ours_us,
            floor_us=rg_us,
            target_ratio=1.2,
            note=f"{(ours.data or {}).get('files')} files, CPU {ours_cpu:.0f} ms ({ours_cpu / rg_cpu:.2f}x)",
        )

    rx = re.compile(PATTERN)

    def python_walk() -> int:
        n = 0
        for dirpath, _dirs, names in os.walk(stdlib):
            for name in names:
                if name.endswith(".py"):
                    try:
                        with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                            n += sum(1 for line in f if rx.search(line))
                    except OSError:
                        pass
        return n

    walk_us = median_us(python_walk, repeat=3)
    report(GROUP, "grep -g '*.py': Python os.walk + re", walk_us)
    args = {"pattern": PATTERN, "output_mode": "count", "glob": "*.py"}
    ours_us = median_us(lambda: reg.execute_tool("grep", args), repeat=5)
    report(GROUP, "grep -g '*.py': in process vs the Python walk", ours_us, floor_us=walk_us)

    globbed = reg.execute_tool("glob", {"pattern": "**/*.py"})
    glob_us = median_us(lambda: reg.execute_tool("glob", {"pattern": "**/*.py"}), repeat=5)
    py_us = median_us(lambda: pyglob.glob("**/*.py", root_dir=stdlib, recursive=True), repeat=5)
    py_n = len(pyglob.glob("**/*.py", root_dir=stdlib, recursive=True))
    glob_cpu = cpu_ms(lambda: reg.execute_tool("glob", {"pattern": "**/*.py"}))
    py_cpu = cpu_ms(lambda: pyglob.glob("**/*.py", root_dir=stdlib, recursive=True))
    report(GROUP, "glob **/*.py: glob.glob(recursive=True)", py_us, note=f"{py_n} paths, CPU {py_cpu:.0f} ms")
    report(
        GROUP,
        "glob **/*.py: in process",
        glob_us,
        floor_us=py_us,
        target_ratio=0.5,
        note=f"{(globbed.data or {}).get('count')} paths, CPU {glob_cpu:.0f} ms ({glob_cpu / py_cpu:.2f}x)",
    )


def read_and_edit() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lines = [f"line {i:06d} " + "x" * 40 + "\n" for i in range(20_000)]
        body = "".join(lines)
        (root / "big.txt").write_text(body)
        print(f"# file: {len(body.encode())} bytes, {len(lines)} lines", flush=True)
        reg = registry(Workspace(root))
        page = {"file_path": "big.txt", "offset": 5000, "limit": 200}
        assert reg.execute_tool("read_file", page).text.startswith("  5000\tline 004999")
        report(
            GROUP,
            "read_file: 200 lines at line 5,000 of 1 MB",
            per_call_us(lambda: reg.execute_tool("read_file", page), number=500),
            target_us=1000,
        )
        state = {"a": "line 012345 ", "b": "LINE 012345 "}

        def edit() -> None:
            resp = reg.execute_tool(
                "edit_file", {"file_path": "big.txt", "old_string": state["a"], "new_string": state["b"]}
            )
            assert resp.status == "success", resp.text
            state["a"], state["b"] = state["b"], state["a"]

        path = root / "plain.txt"
        path.write_text(body)
        plain = {"a": "line 012345 ", "b": "LINE 012345 "}

        def python_edit() -> None:
            text = path.read_text()
            path.write_text(text.replace(plain["a"], plain["b"], 1))
            plain["a"], plain["b"] = plain["b"], plain["a"]

        floor = per_call_us(python_edit, number=200)
        report(GROUP, "edit_file 1 MB: plain Python read/replace/write", floor)
        edit_us = per_call_us(edit, number=200)
        report(
            GROUP,
            "edit_file 1 MB: one unique string, atomic",
            edit_us,
            target_us=2000,
            note=f"({edit_us / floor:.1f}x the plain Python edit)",
        )


def main() -> None:
    grep_and_glob()
    read_and_edit()


if __name__ == "__main__":
    main()
