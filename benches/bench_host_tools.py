"""CLITool and NotesTool scenarios (issue 6): the cost of the hardening over the plain call.

Floors, measured in the same run: `subprocess.run` of the same program (no shell, pipes,
new session) for CLITool; plain `open().write()` / `open().read()` for NotesTool.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from agentmaker import CLITool, NotesTool, ToolRegistry
from harness import median_us, per_call_us, report

GROUP = "host"


def cli() -> None:
    true = shutil.which("true") or "/bin/true"
    tool = CLITool(["true", "echo"])
    reg = ToolRegistry()
    reg.register(tool)

    def floor_true() -> None:
        subprocess.run(
            [true], stdin=subprocess.DEVNULL, capture_output=True, start_new_session=True, env={}, check=True
        )

    floor = per_call_us(floor_true, number=200, repeat=5)
    report(GROUP, "shell: `true`, subprocess.run floor", floor)
    report(
        GROUP,
        "shell: `true` via CLITool.run",
        per_call_us(lambda: tool.run({"command": "true"}), number=200, repeat=5),
        floor_us=floor,
    )
    report(
        GROUP,
        "shell: `echo hi` via registry.execute_tool",
        per_call_us(lambda: reg.execute_tool("shell", {"command": "echo hi"}), number=200, repeat=5),
        floor_us=floor,
    )
    report(
        GROUP,
        "shell: refused operator (no process started)",
        per_call_us(lambda: tool.run({"command": "echo a | sh"}), number=20_000),
    )

    flood = CLITool(["yes"], max_output_chars=4000, timeout=30)
    report(
        GROUP, "shell: `yes` flood stopped at the 16 KB cap", median_us(lambda: flood.run({"command": "yes"}))
    )
    sh = CLITool(["sh"], timeout=10, arg_policy=lambda argv: None)
    report(
        GROUP,
        "shell: exits at once, grandchild holds the pipe (grace)",
        median_us(lambda: sh.run({"command": "sh -c 'sleep 30 & echo done'"}), repeat=5),
    )
    quick = CLITool(["sleep"], timeout=0.2)
    start = time.perf_counter()
    quick.run({"command": "sleep 30"})
    report(GROUP, "shell: timeout=0.2 s on `sleep 30` (kill + reap)", (time.perf_counter() - start) * 1e6)


def notes() -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-notes-"))
    try:
        root = base / "root"
        tool = NotesTool(root, max_file_bytes=10**9)
        tool.run({"action": "append", "path": "deep/a/b/note.md", "content": "x" * 2000})
        plain = root / "plain.md"
        plain.write_text("x" * 2000)

        def floor_read() -> str:
            with open(plain) as f:
                return f.read()

        def floor_append() -> None:
            with open(plain, "a") as f:
                f.write("line\n")

        rf = per_call_us(floor_read, number=5000)
        report(GROUP, "notes: read 2 KB, plain open().read() floor", rf)
        report(
            GROUP,
            "notes: read 2 KB at depth 4 via NotesTool.run",
            per_call_us(lambda: tool.run({"action": "read", "path": "deep/a/b/note.md"}), number=5000),
            floor_us=rf,
        )
        af = per_call_us(floor_append, number=5000)
        report(GROUP, "notes: append a line, plain open('a').write() floor", af)
        report(
            GROUP,
            "notes: append a line via NotesTool.run",
            per_call_us(
                lambda: tool.run({"action": "append", "path": "log.md", "content": "line"}), number=5000
            ),
            floor_us=af,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    cli()
    notes()


if __name__ == "__main__":
    main()
