"""Workspace ``glob`` lists exactly what Python's ``glob.glob(recursive=True)`` lists on the same
tree, less what ours never follows (symlinks, to files or directories, inside or out of the
root), in ``rg --sort path`` order, across sibling and nested directories."""

from __future__ import annotations

import glob as pyglob
import os
from pathlib import Path
from typing import Any

import pytest
from agentmaker import ToolRegistry, ToolResponse, Workspace


def run_glob(root: Path, args: dict[str, Any]) -> ToolResponse:
    reg = ToolRegistry()
    reg.register(next(t for t in Workspace(root, max_entries=100_000) if t.name == "glob"))
    return reg.execute_tool("glob", args)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    names = ["a", "b", "a_b", "z"]
    # Files and directories interleave in sorted order (`a/b.py`, `a/c/...`, `a/d.py`), so the
    # confirming walk goes down, back up and down again many times.
    for i, top in enumerate(names):
        for j, mid in enumerate(["c", "a", "m", ".hid"]):
            for k in range(3):
                leaf = root / top / mid / f"n{k}"
                leaf.mkdir(parents=True)
                (leaf / f"f{i}{j}{k}.py").write_text("x\n")
                (leaf / "notes.txt").write_text("x\n")
            (root / top / mid / f"{mid}.py").write_text("x\n")
            (root / top / mid / ".dot.py").write_text("x\n")
        (root / top / "b.py").write_text("x\n")
        (root / top / "d.py").write_text("x\n")
    (root / "top.py").write_text("x\n")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "out.py").write_text("secret\n")
    (outside / "deep" / "more.py").write_text("secret\n")
    (root / "a" / "to_outside").symlink_to(outside)
    (root / "b" / "c" / "to_sibling").symlink_to(root / "a" / "m")
    (root / "z" / "alias.py").symlink_to(root / "top.py")
    (root / "z" / "gone.py").symlink_to(root / "missing.py")
    return root


def followed_a_link(root: Path, rel: str) -> bool:
    at = root
    for part in rel.split("/"):
        at = at / part
        if at.is_symlink():
            return True
    return not at.is_file()


@pytest.mark.parametrize("hidden", [False, True])
def test_glob_equals_python_glob_less_symlinks(tree: Path, hidden: bool) -> None:
    python = pyglob.glob("**/*.py", root_dir=tree, recursive=True, include_hidden=hidden)
    assert any("to_outside" in p for p in python) and any("to_sibling" in p for p in python)
    expected = sorted(
        (p.replace(os.sep, "/") for p in python if not followed_a_link(tree, p)),
        key=lambda p: p.split("/"),
    )
    got = run_glob(tree, {"pattern": "**/*.py", "hidden": hidden})
    assert got.status == "success", got.text
    assert got.text.split("\n") == expected
    assert (got.data or {})["count"] == len(expected)
    assert len(expected) == (4 * 5 + 2 if hidden else 3 * 4 + 2) * 4 + 1


def test_glob_under_a_sub_directory_and_without_double_star(tree: Path) -> None:
    got = run_glob(tree, {"pattern": "**/*.py", "path": "a/m"})
    python = pyglob.glob("**/*.py", root_dir=tree / "a" / "m", recursive=True)
    assert got.text.split("\n") == sorted((f"a/m/{p}" for p in python), key=lambda p: p.split("/"))
    assert run_glob(tree, {"pattern": "*/*.py", "path": "b"}).text == ("b/a/a.py\nb/c/c.py\nb/m/m.py")
    capped = run_glob(tree, {"pattern": "**/f*.py", "head_limit": 2})
    assert capped.text.split("\n")[:2] == ["a/a/n0/f010.py", "a/a/n1/f011.py"]
    assert (capped.data or {}) == {"count": 36, "shown": 2, "truncated": True}


def test_names_that_are_not_utf8_are_left_out_and_ls_says_how_many(tmp_path: Path) -> None:
    os.makedirs(tmp_path, exist_ok=True)
    with open(os.path.join(os.fsencode(tmp_path), b"\xff.py"), "w") as f:
        f.write("x = 1\n")
    (tmp_path / "ok.py").write_text("x = 1\n")
    reg = ToolRegistry()
    reg.register_all(list(Workspace(tmp_path)))
    assert reg.execute_tool("glob", {"pattern": "**/*.py"}).text == "ok.py"
    assert reg.execute_tool("grep", {"pattern": "x", "output_mode": "files_with_matches"}).text == "ok.py"
    listed = reg.execute_tool("ls", {}).text.splitlines()
    assert listed[1:] == [
        "ok.py  (6 bytes)",
        "Names not in UTF-8, left out: 1 (no tool can be given them as a path)",
    ]
