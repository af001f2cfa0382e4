"""Workspace ``grep`` finds exactly what the ``rg`` command finds (the ``ripgrep`` package of
the test extra ships the binary), for a dozen patterns and option sets."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentmaker import ToolRegistry, Workspace


def rg_binary() -> str:
    beside = Path(sys.executable).parent / "rg"
    found = str(beside) if beside.exists() else shutil.which("rg")
    assert found, "the rg binary is missing: install the test extra (pip install ripgrep)"
    return found


FILES = {
    "app/main.py": "import os\nimport sys\n\n\nclass Boom(Exception):\n    pass\n\n\ndef main():\n    # TODO: parse args\n    return os.getcwd()\n",
    "app/util.py": "from x import y\n\ndef helper(a):\n    return a.b  # a.b literal\n\nclass Plain:\n    pass\n\nclass Err(Exception):\n    '''todo later'''\n",
    "app/nested/deep.py": "def deep():\n    return 'foo'\n\ndef other():\n    return 'bar'\n",
    "src/lib.rs": "fn main() {\n    let x = 1;\n}\n\npub fn helper() -> u32 {\n    42\n}\n",
    "src/bin/tool.rs": 'use std::env;\nfn main() { println!("TODO"); }\n',
    "docs/guide.md": "# Guide\n\nSome text with café and TODO.\n## Part\nfoo bar\n",
    "docs/crlf.txt": "first line\r\nsecond TODO\r\nthird\r\n",
    "build/generated.py": "def generated():\n    return 'TODO'\n",
    ".hidden/conf.py": "secret = 'TODO'\n",
    "notes.txt": "x marks\nnothing\nreturn of x\n",
    ".gitignore": "build/\n",
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("grep") / "root"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    (root / "app" / "blob.bin").write_bytes(b"\0\0TODO\0")
    return root


def rg(root: Path, args: dict[str, Any]) -> str:
    cmd = [
        rg_binary(),
        "--no-heading",
        "--with-filename",
        "--sort",
        "path",
        "--color",
        "never",
        "--no-require-git",
        "--no-ignore-parent",
        "--no-ignore-global",
    ]
    mode = args.get("output_mode", "files_with_matches")
    cmd += {"files_with_matches": ["-l"], "count": ["-c"], "content": []}[mode]
    if mode == "content":
        cmd.append("-n" if args.get("-n", True) else "-N")
    for flag in ("-A", "-B", "-C"):
        if args.get(flag):
            cmd += [flag, str(args[flag])]
    if args.get("-i"):
        cmd.append("-i")
    if args.get("fixed_strings"):
        cmd.append("-F")
    if args.get("hidden"):
        cmd.append("--hidden")
    if "glob" in args:
        cmd += ["-g", args["glob"]]
    if "type" in args:
        cmd += ["-t", args["type"]]
    cmd += ["-e", args["pattern"]]
    if args.get("path", ".") != ".":
        cmd.append(args["path"])
    out = subprocess.run(cmd, cwd=root, capture_output=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout.decode().rstrip("\n")


CASES: list[dict[str, Any]] = [
    {"pattern": r"def \w+", "output_mode": "content"},
    {"pattern": r"class \w+\(Exception\)", "output_mode": "count"},
    {"pattern": "TODO"},
    {"pattern": "todo", "-i": True, "output_mode": "content"},
    {"pattern": "a.b", "fixed_strings": True, "output_mode": "content"},
    {"pattern": "return", "-C": 1, "output_mode": "content"},
    {"pattern": "import", "-A": 2, "output_mode": "content"},
    {"pattern": r"fn \w+", "type": "rust", "output_mode": "content"},
    {"pattern": r"\bmain\b", "glob": "*.rs"},
    {"pattern": "x", "glob": "!*.py", "output_mode": "count"},
    {"pattern": "TODO", "hidden": True, "output_mode": "content"},
    {"pattern": "^#", "path": "docs", "output_mode": "content", "-n": False},
    {"pattern": "café", "output_mode": "content"},
    {"pattern": "foo|bar", "-B": 1, "output_mode": "content"},
    {"pattern": "TODO", "path": "docs/crlf.txt", "output_mode": "content"},
    {"pattern": "pass", "path": "app", "output_mode": "count", "type": "py"},
]


@pytest.mark.parametrize("args", CASES, ids=[str(i) for i in range(len(CASES))])
def test_grep_equals_rg(tree: Path, args: dict[str, Any]) -> None:
    reg = ToolRegistry()
    for t in Workspace(tree):
        reg.register(t)
    expected = rg(tree, args)
    resp = reg.execute_tool("grep", dict(args))
    got = "" if resp.text.startswith("No matches") else resp.text
    assert got == expected, f"\n--- ours\n{got}\n--- rg\n{expected}"
    assert expected, "every case should find something"


def test_grep_errors_and_caps(tree: Path) -> None:
    reg = ToolRegistry()
    for t in Workspace(tree):
        reg.register(t)
    assert reg.execute_tool("grep", {"pattern": "("}).text.startswith("Error: invalid regular expression")
    assert "unknown file type 'nope'" in reg.execute_tool("grep", {"pattern": "x", "type": "nope"}).text
    capped = reg.execute_tool("grep", {"pattern": "TODO", "head_limit": 2})
    lines = capped.text.split("\n")
    assert lines[:2] == ["app/main.py", "docs/crlf.txt"]
    assert lines[2].startswith("…(showing 2 of 4;")
    assert capped.data == {"files": 4, "matches": 4, "lines": 4, "shown": 2, "truncated": True}
    assert "outside the workspace" in reg.execute_tool("grep", {"pattern": "x", "path": ".."}).text
