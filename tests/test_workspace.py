"""Workspace: the confined file tools, through ``execute_tool`` and ``Agent.run``."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from agentmaker import Agent, ToolConfigError, ToolRegistry, Workspace
from agentmaker.testing import ScriptedLLM


def registry(ws: Workspace) -> ToolRegistry:
    reg = ToolRegistry()
    for t in ws:
        reg.register(t)
    return reg


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (root / "README.md").write_text("# calc\n")
    (tmp_path / "outside.txt").write_text("outside secret\n")
    return root


def test_tools_names_flags_and_read_only(tree: Path) -> None:
    ws = Workspace(tree)
    assert [t.name for t in ws] == [
        "ls",
        "read_file",
        "glob",
        "grep",
        "write_file",
        "edit_file",
        "multi_edit",
    ]
    flags = {t.name: (t.read_only, t.destructive, t.supports_parallel) for t in ws}
    assert flags["grep"] == (True, False, True)
    assert flags["edit_file"] == (False, True, False)
    assert str(tree) in (ws.instructions or "")
    assert ws.root == tree.resolve()
    ro = Workspace(tree, read_only=True)
    assert [t.name for t in ro] == ["ls", "read_file", "glob", "grep"]
    schema = registry(ws).get_schema("grep")
    assert schema is not None
    props = schema["properties"]
    assert list(props)[:5] == ["pattern", "path", "glob", "type", "output_mode"]
    assert props["output_mode"]["enum"] == ["content", "files_with_matches", "count"]
    assert schema["required"] == ["pattern"]
    edit = registry(ws).get_schema("multi_edit")
    assert edit is not None and edit["properties"]["edits"]["items"]["required"] == [
        "old_string",
        "new_string",
    ]


def test_construction_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Workspace(tmp_path / "missing")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ToolConfigError, match="not a directory"):
        Workspace(tmp_path / "f")
    with pytest.raises(ToolConfigError, match="read_lines must be a positive integer"):
        Workspace(tmp_path, read_lines=0)
    with pytest.raises(TypeError, match="list of patterns"):
        Workspace(tmp_path, deny=".env")


def test_hostile_paths_through_execute_tool(tree: Path, tmp_path: Path) -> None:
    reg = registry(Workspace(tree))
    (tree / "passwd").symlink_to("/etc/passwd")
    (tree / "zero").symlink_to("/dev/zero")
    (tree / "up").symlink_to(tmp_path)
    os.mkfifo(tree / "pipe")
    cases = {
        "../outside.txt": "outside the workspace",
        "/etc/passwd": "outside the workspace",
        "passwd": "symbolic link",
        "zero": "symbolic link",
        "up/outside.txt": "symbolic link",
        "pipe": "FIFO",
    }
    for path, needle in cases.items():
        resp = reg.execute_tool("read_file", {"file_path": path})
        assert resp.status == "error" and needle in resp.text, (path, resp.text)
    resp = reg.execute_tool("write_file", {"file_path": "up/outside.txt", "content": "pwned"})
    assert resp.status == "error"
    assert (tmp_path / "outside.txt").read_text() == "outside secret\n"
    resp = reg.execute_tool("write_file", {"file_path": "pipe", "content": "x"})
    assert "FIFO" in resp.text


def test_binary_sparse_invalid_utf8_and_crlf(tree: Path) -> None:
    reg = registry(Workspace(tree))
    with open(tree / "disk.img", "wb") as f:
        f.truncate(2 << 30)
    assert (
        "binary file (binary data, 2147483648 bytes)"
        in reg.execute_tool("read_file", {"file_path": "disk.img"}).text
    )
    (tree / "latin.txt").write_bytes(b"na\xefve\n")
    assert reg.execute_tool("read_file", {"file_path": "latin.txt"}).text.startswith("     1\tna\\xEFve")
    (tree / "win.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert reg.execute_tool("read_file", {"file_path": "win.txt"}).text == "     1\ta\n     2\tb"
    resp = reg.execute_tool("edit_file", {"file_path": "win.txt", "old_string": "a\nb", "new_string": "A\nB"})
    assert resp.status == "success", resp.text
    assert (tree / "win.txt").read_bytes() == b"\xef\xbb\xbfA\r\nB\r\n"


def test_edit_uniqueness_closest_lines_and_multi_edit_atomicity(tree: Path) -> None:
    reg = registry(Workspace(tree))
    path = tree / "src" / "calc.py"
    before = path.read_bytes()
    resp = reg.execute_tool("edit_file", {"file_path": "src/calc.py", "old_string": "a", "new_string": "x"})
    assert "has not been read" in resp.text
    reg.execute_tool("read_file", {"file_path": "src/calc.py"})
    resp = reg.execute_tool(
        "edit_file", {"file_path": "src/calc.py", "old_string": "(a, b):", "new_string": "(x, y):"}
    )
    assert resp.text.startswith("Error: old_string occurs 2 times in src/calc.py (at lines 1, 5)")
    resp = reg.execute_tool(
        "edit_file", {"file_path": "src/calc.py", "old_string": "def ad(a, b):", "new_string": "x"}
    )
    assert "The closest lines are:\n     1\tdef add(a, b):\n" in resp.text
    edits = [
        {"old_string": "return a + b", "new_string": "return b + a"},
        {"old_string": "return a * b", "new_string": "return 0"},
    ]
    resp = reg.execute_tool("multi_edit", {"file_path": "src/calc.py", "edits": edits})
    assert resp.text.startswith("Error: edit 2 of 2 failed; no edit was applied.")
    assert path.read_bytes() == before
    resp = reg.execute_tool(
        "edit_file",
        {"file_path": "src/calc.py", "old_string": "(a, b):", "new_string": "(x, y):", "replace_all": True},
    )
    assert resp.text.startswith(
        "Edited src/calc.py: 2 replacement(s).\n@@ line 1 @@\n-def add(a, b):\n+def add(x, y):"
    )


def test_write_keeps_mode_and_refuses_stale_files(tree: Path) -> None:
    reg = registry(Workspace(tree))
    readme = tree / "README.md"
    readme.chmod(0o644)
    reg.execute_tool("read_file", {"file_path": "README.md"})
    resp = reg.execute_tool("write_file", {"file_path": "README.md", "content": "# new\n"})
    assert resp.text == "Wrote README.md (6 bytes, 1 lines), replacing its previous content."
    assert readme.stat().st_mode & 0o777 == 0o644
    time.sleep(0.02)
    readme.write_text("# edited by a person\n")
    resp = reg.execute_tool("write_file", {"file_path": "README.md", "content": "# agent\n"})
    assert "changed on disk since you last read it" in resp.text
    assert readme.read_text() == "# edited by a person\n"
    resp = reg.execute_tool("write_file", {"file_path": "docs/new.md", "content": "x"})
    assert "create_dirs=true" in resp.text
    resp = reg.execute_tool("write_file", {"file_path": "docs/new.md", "content": "x", "create_dirs": True})
    assert resp.text == "Created docs/new.md (1 bytes, 1 lines)."


def test_secrets_are_refused_and_configurable(tree: Path) -> None:
    (tree / ".env").write_text("KEY=1\n")
    (tree / "id_rsa").write_text("KEY=2\n")
    reg = registry(Workspace(tree))
    assert "deny list: .env" in reg.execute_tool("read_file", {"file_path": ".env"}).text
    assert "deny list: id_rsa*" in reg.execute_tool("read_file", {"file_path": "id_rsa"}).text
    grep = reg.execute_tool("grep", {"pattern": "KEY", "hidden": True})
    assert grep.text.startswith("No matches")
    open_reg = registry(Workspace(tree, deny=["*.md"]))
    assert open_reg.execute_tool("read_file", {"file_path": ".env"}).text == "     1\tKEY=1"
    assert "deny list: *.md" in open_reg.execute_tool("read_file", {"file_path": "README.md"}).text


def test_a_killed_write_leaves_the_old_or_the_new_file(tree: Path) -> None:
    target = tree / "big.txt"
    old = b"old\n" * 1000
    target.write_bytes(old)
    script = textwrap.dedent(
        f"""
        import sys
        from agentmaker import ToolRegistry, Workspace
        reg = ToolRegistry()
        for t in Workspace({str(tree)!r}):
            reg.register(t)
        reg.execute_tool("read_file", {{"file_path": "big.txt", "limit": 1}})
        print("ready", flush=True)
        reg.execute_tool("write_file", {{"file_path": "big.txt", "content": "new\\n" * 50_000_000}})
        """
    )
    # The child imports agentmaker as this process did (installed, or the caller's PYTHONPATH).
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        # Kill it once the temporary file exists and is being filled.
        temps: list[Path] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            temps = [p for p in tree.iterdir() if p.name.startswith(".big.txt.")]
            if temps and temps[0].stat().st_size > 1_000_000:
                break
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert temps, "the write never started"
    assert target.read_bytes() == old


def test_agent_run_greps_reads_and_edits(tree: Path) -> None:
    ws = Workspace(tree)
    script = [
        ScriptedLLM.tool_call("grep", {"pattern": r"def \w+", "output_mode": "content"}),
        ScriptedLLM.tool_calls(
            ("read_file", {"file_path": "src/calc.py"}, "r1"),
            ("glob", {"pattern": "**/*.md"}, "g1"),
        ),
        ScriptedLLM.tool_call(
            "edit_file",
            {"file_path": "src/calc.py", "old_string": "return a - b", "new_string": "return a - b - 0"},
        ),
        "done",
    ]
    llm = ScriptedLLM(script)
    result = Agent("coder", llm, tools=[ws]).run("fix sub")
    assert [(c.name, c.status) for c in result.tool_calls] == [
        ("grep", "success"),
        ("read_file", "success"),
        ("glob", "success"),
        ("edit_file", "success"),
    ]
    assert "return a - b - 0" in (tree / "src" / "calc.py").read_text()
    grep_out = next(m["content"] for m in llm.requests[1].messages if m["role"] == "tool")
    assert "src/calc.py:1:def add(a, b):\nsrc/calc.py:5:def sub(a, b):" in grep_out
    system = llm.requests[0].messages[0]["content"]
    assert "Read a file with read_file before you edit" in system


def test_socket_in_the_tree_is_refused(tree: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tree / "s.sock"))
        resp = registry(Workspace(tree)).execute_tool("read_file", {"file_path": "s.sock"})
        assert "socket" in resp.text and resp.status == "error"
    finally:
        sock.close()


def test_agent_arun_runs_read_tools_in_parallel_and_edits(tree: Path) -> None:
    ws = Workspace(tree)
    script = [
        ScriptedLLM.tool_calls(
            ("read_file", {"file_path": "src/calc.py"}, "a"),
            ("ls", {"path": "src"}, "b"),
            ("grep", {"pattern": "sub", "output_mode": "count"}, "c"),
        ),
        ScriptedLLM.tool_call(
            "multi_edit",
            {
                "file_path": "src/calc.py",
                "edits": [
                    {"old_string": "add", "new_string": "plus"},
                    {"old_string": "sub", "new_string": "minus"},
                ],
            },
        ),
        "done",
    ]
    result = asyncio.run(Agent("coder", ScriptedLLM(script), tools=[ws]).arun("rename"))
    assert [c.status for c in result.tool_calls] == ["success"] * 4
    text = (tree / "src" / "calc.py").read_text()
    assert "def plus(a, b):" in text and "def minus(a, b):" in text


def test_options_read_before_write_prompts_and_caps(tree: Path) -> None:
    for i in range(5):
        (tree / f"f{i}.txt").write_text(f"{i}\n" * 50)
    ws = Workspace(
        tree,
        read_before_write=False,
        max_entries=3,
        max_read_bytes=60,
        prompts={"workspace.msg.write.replaced": "replaced {path}"},
    )
    reg = registry(ws)
    assert (
        reg.execute_tool("write_file", {"file_path": "f0.txt", "content": "new\n"}).text == "replaced f0.txt"
    )
    listing = reg.execute_tool("ls", {})
    assert listing.status == "partial"
    assert listing.text.splitlines()[-1] == "…(4 more entries not shown)"
    page = reg.execute_tool("read_file", {"file_path": "f1.txt"})
    assert page.text.endswith("…(output capped at 60 bytes; read on with offset=7, or a smaller limit)")
    assert page.data == {"path": "f1.txt", "offset": 1, "lines": 6, "next_offset": 7}
    with pytest.raises(ToolConfigError, match="unknown"):
        Workspace(tree, prompts={"workspace.nope": "x"})
