"""The README is short, its example runs exactly as shown, and its set-up commands are CI's."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import REPO

README = REPO / "README.md"


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number of the opening fence, language, body) of every fenced block."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)$", lines[i])
        if not m:
            i += 1
            continue
        end = lines.index("```", i + 1)
        blocks.append((i + 1, m.group(1), "\n".join(lines[i + 1 : end])))
        i = end + 1
    return blocks


def test_the_readme_is_at_most_10_kb():
    assert len(README.read_bytes()) <= 10_240


def test_the_first_example_runs_as_shown(tmp_path):
    blocks = fenced_blocks(README.read_text(encoding="utf-8"))
    first = next(i for i, b in enumerate(blocks) if b[1] == "python")
    line, _, code = blocks[first]
    assert line < 30, "the example must be on the first screen"
    assert "@tool" in code and "Agent(" in code and ".run(" in code
    assert len(code.splitlines()) <= 30
    _, lang, shown = blocks[first + 1]
    assert lang == "text", "the example's output must follow it"
    script = tmp_path / "example.py"
    script.write_text(code + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shown + "\n"


def test_the_set_up_commands_are_the_ones_ci_runs():
    text = README.read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    commands = [line for line in text.splitlines() if line.startswith("python3 -m venv .venv && ")]
    assert len(commands) == 2, commands
    install, test = (c.split(" && ") for c in commands)
    assert install == [
        "python3 -m venv .venv",
        ". .venv/bin/activate",
        "pip install .",
        "python examples/02_tools_and_registry.py",
    ]
    assert test[:2] == install[:2]
    # CI's lines may add quiet flags or a report file; the commands are the README's, in order.
    ci_lines = [
        line.replace(" -q ", " ") for line in ci.splitlines() if not line.lstrip().startswith(("#", "echo"))
    ]
    positions = []
    for step in test[2:]:
        found = [i for i, line in enumerate(ci_lines) if step in line]
        assert found, f"CI does not run {step!r}"
        positions.append(found[0])
    assert positions == sorted(positions)


def test_documentation_links_resolve():
    pages = [README, REPO / "benches" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)} -> {target}")
    assert not broken


def test_no_document_or_test_points_outside_the_repository():
    outside = "../" + "shared"
    hits = [
        str(p.relative_to(REPO))
        for p in [README, *(REPO / "docs").glob("*.md"), *(REPO / "tests").rglob("*.py")]
        if outside in p.read_text(encoding="utf-8")
    ]
    assert not hits
