"""NotesTool against a real filesystem, with an adversary that plants links and special files
(and swaps them while calls run): nothing outside the root is ever read or modified."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import stat
import sys
import threading
import time
from pathlib import Path

import pytest
from agentmaker import NotesTool, ToolConfigError, ToolRegistry

SECRET = "TOP-SECRET-OUTSIDE"


def read(tool: NotesTool, path: str):
    return tool.run({"action": "read", "path": path})


def append(tool: NotesTool, path: str, content: str):
    return tool.run({"action": "append", "path": path, "content": content})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.md").write_text(SECRET)
    return d


def assert_outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert (outside / "secret.md").read_text() == SECRET


# --- construction ---------------------------------------------------------------------------


def test_missing_root_is_created_private(tmp_path: Path) -> None:
    root = tmp_path / "deep" / "notes"
    tool = NotesTool(root=str(root))
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert tool.root == root
    assert tool.name == "notes"
    assert str(root) in tool.description
    assert [p.name for p in tool.get_parameters()] == ["action", "path", "content"]
    assert tool.get_parameters()[0].schema["enum"] == ["read", "append"]
    assert tool.requires_confirmation is True


def test_bad_roots_are_refused(tmp_path: Path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o755)
    with pytest.raises(PermissionError, match="must not be accessible to group or others"):
        NotesTool(open_dir)
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(ToolConfigError, match="must be a directory and must not be a symlink"):
        NotesTool(link)
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(ToolConfigError, match="must be a directory"):
        NotesTool(afile)
    with pytest.raises(ToolConfigError, match="non-empty path"):
        NotesTool("  ")
    for kw in ["max_read_chars", "max_append_chars", "max_file_bytes"]:
        with pytest.raises(ToolConfigError, match=f"{kw} must be a positive integer, got 0"):
            NotesTool(tmp_path / "n", **{kw: 0})
    with pytest.raises(ToolConfigError, match="unknown prompt key"):
        NotesTool(tmp_path / "n", prompts={"tool.msg.notes.nope": "x"})
    with pytest.raises(TypeError):
        NotesTool(tmp_path / "n", 10)  # limits are keyword-only


def test_root_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)  # nobody
        with pytest.raises(PermissionError, match="must be owned by the current user"):
            NotesTool(theirs)
    else:
        # Not root: a directory we cannot chown; a root-owned one such as / shows the same rule.
        with pytest.raises(PermissionError):
            NotesTool("/")


# --- behaviour ------------------------------------------------------------------------------


def test_append_and_read_round_trip(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root")
    resp = read(tool, "progress.md")
    assert resp.status == "success"
    assert resp.text == "(note progress.md does not exist yet or is empty)"
    assert resp.data == {"path": "progress.md", "exists": False}
    resp = append(tool, "./plans/week.md", "step one")
    assert resp.text == "Appended 9 characters to note plans/week.md."
    assert resp.data == {"path": "plans/week.md", "appended_chars": 9}
    append(tool, "plans/week.md", "stép two\r\n")
    resp = read(tool, "plans/week.md")
    assert resp.text == "step one\nstép two\r\n"
    assert resp.data == {"path": "plans/week.md", "exists": True}
    assert stat.S_IMODE((tmp_path / "root/plans/week.md").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "root/plans").stat().st_mode) == 0o700


def test_confirmation_and_external_content_are_per_action(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root")
    assert tool.needs_confirmation({"action": "append", "path": "a"}) is True
    assert tool.needs_confirmation({"action": "read", "path": "a"}) is False
    assert tool.needs_confirmation({"action": "bogus"}) is True
    assert tool.is_external_content({"action": "read", "path": "a"}) is True
    assert tool.is_external_content({"action": "append", "path": "a"}) is False


def test_read_is_bounded_and_partial(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root", max_read_chars=5)
    append(tool, "a.md", "0123456789")
    resp = read(tool, "a.md")
    assert resp.status == "partial"
    assert resp.text == "01234\n…(note truncated, over 5 characters)"
    assert resp.data == {"path": "a.md", "exists": True, "truncated": True}


def test_invalid_utf8_in_files_is_shown_lossily(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root")
    (tmp_path / "root" / "bin.md").write_bytes(b"ok \xff\xfe\x00 end")
    resp = read(tool, "bin.md")
    assert resp.text == "ok \ufffd\ufffd\x00 end"
    assert resp.data["invalid_utf8"] is True


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../outside/secret.md", "a/../../x", "a/b/..", ".."],
)
def test_out_of_bounds_paths(tmp_path: Path, path: str) -> None:
    tool = NotesTool(tmp_path / "root")
    for resp in (read(tool, path), append(tool, path, "x")):
        assert resp.status == "error"
        assert resp.text == f"Error: path out of bounds; only files under {tmp_path / 'root'} are accessible"


@pytest.mark.parametrize(
    "path",
    ["a//b.md", "a/", ".hidden", "x/.git/config", "a\x00b", "a\nb", "a\u202eb", "a\x7fb", "x/" * 40 + "y"],
)
def test_malformed_paths_are_refused(tmp_path: Path, path: str) -> None:
    tool = NotesTool(tmp_path / "root")
    for resp in (read(tool, path), append(tool, path, "x")):
        assert resp.status == "error"
        assert resp.text.startswith("Error: path "), resp.text
    assert list((tmp_path / "root").iterdir()) == []


def test_bad_actions_and_empty_content(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root")
    assert (
        tool.run({"action": "delete", "path": "a"}).text
        == "Error: action must be read / append, got 'delete'"
    )
    assert tool.run({"action": "read", "path": "  "}).text == "Error: path must not be empty"
    assert append(tool, "a.md", " \n\t").text == "Error: append content must not be empty"
    registry = ToolRegistry()
    registry.register(tool)
    resp = registry.execute_tool("notes", {"action": "delete", "path": "a"})
    assert resp.status == "error" and "delete" in resp.text
    assert (
        registry.execute_tool("notes", {"action": "append", "path": "r.md", "content": "x"}).status
        == "success"
    )


# --- adversarial filesystem -----------------------------------------------------------------


@pytest.mark.parametrize("position", [0, 1, 2])
def test_a_symlink_at_every_path_component(tmp_path: Path, outside: Path, position: int) -> None:
    root = tmp_path / "root"
    tool = NotesTool(root)
    parts = ["a", "b", "secret.md"]
    real = root
    for name in parts[:position]:
        real = real / name
        real.mkdir()
    target = outside / "secret.md" if position == 2 else outside
    (real / parts[position]).symlink_to(target)
    rel = "/".join(parts)
    for resp in (read(tool, rel), append(tool, rel, "pwned")):
        assert resp.status == "error", resp.text
        assert SECRET not in resp.text
    assert_outside_untouched(outside)


def test_hard_link_to_an_outside_file(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "root"
    tool = NotesTool(root)
    os.link(outside / "secret.md", root / "hard.md")
    assert (
        read(tool, "hard.md").text == "Error: note hard.md is not a regular file with a single link; refused"
    )
    assert append(tool, "hard.md", "pwned").status == "error"
    assert_outside_untouched(outside)


def test_fifo_socket_and_device_never_block(tmp_path: Path) -> None:
    root = tmp_path / "root"
    tool = NotesTool(root)
    os.mkfifo(root / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock"))
    names = ["fifo", "sock"]
    if os.geteuid() == 0:
        os.mknod(root / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        names.append("null")
    try:
        start = time.monotonic()
        for name in names:
            assert read(tool, name).status == "error", name
            assert append(tool, name, "x").status == "error", name
        assert time.monotonic() - start < 5  # opening a FIFO for reading would block forever
    finally:
        sock.close()


def test_very_long_paths(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root")
    resp = append(tool, "n" * 300, "x")
    assert resp.status == "error" and "File name too long" in resp.text
    assert read(tool, "/".join(["d"] * 33)).text.startswith("Error: path ")
    assert read(tool, "/".join(["d" * 200] * 6)).text.startswith("Error: path ")
    assert read(tool, "x" * 100_000).text.startswith("Error: path ")
    deep = "/".join(["d"] * 31) + "/ok.md"
    assert append(tool, deep, "deep").status == "success"
    assert read(tool, deep).text == "deep\n"


@pytest.mark.parametrize(
    ("path", "accepted"),
    [
        ("．．/x.md", True),
        ("\u2024\u2024/x.md", True),
        ("x\u2215..\u2215y.md", True),
        ("..∕x.md", False),
        ("..\u2044x.md", False),
    ],
)
def test_unicode_look_alikes_stay_inside(tmp_path: Path, outside: Path, path: str, accepted: bool) -> None:
    """Look-alike dots and slashes are ordinary characters to the kernel: such a path names a
    file inside the root (or is refused as hidden when it starts with a real dot)."""
    root = tmp_path / "root"
    tool = NotesTool(root)
    resp = append(tool, path, "inside")
    assert (resp.status == "success") is accepted, resp.text
    if accepted:
        assert read(tool, path).text == "inside\n"
        assert (root / path).read_text() == "inside\n"
    assert_outside_untouched(outside)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "root"]


def test_100mb_append_is_refused_without_a_trace(tmp_path: Path) -> None:
    root = tmp_path / "root"
    tool = NotesTool(root)
    huge = "x" * 100_000_000
    start = time.monotonic()
    resp = append(tool, "new/big.md", huge)
    assert resp.text == "Error: a single append exceeds the limit (50000 characters); rejected"
    roomy = NotesTool(root, max_append_chars=200_000_000)
    resp = append(roomy, "new/big.md", huge)
    assert (
        resp.text == "Error: the note would exceed the size limit (2000000 bytes) after appending; rejected"
    )
    assert time.monotonic() - start < 10
    assert list(root.iterdir()) == []
    small = NotesTool(root, max_file_bytes=20)
    assert append(small, "n.md", "0123456789").status == "success"
    assert append(small, "n.md", "0123456789").status == "error"
    assert (root / "n.md").read_bytes() == b"0123456789\n"


def test_lock_contention_is_an_immediate_error(tmp_path: Path) -> None:
    root = tmp_path / "root"
    tool = NotesTool(root)
    append(tool, "a.md", "x")
    with open(root / "a.md", "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        start = time.monotonic()
        busy = "Error: note a.md is in use by another reader or writer; try again"
        assert append(tool, "a.md", "y").text == busy
        assert read(tool, "a.md").text == busy
        assert time.monotonic() - start < 2  # a blocking lock would wait forever
    assert read(tool, "a.md").text == "x\n"


def test_symlinks_swapped_in_and_out_never_escape(tmp_path: Path, outside: Path) -> None:
    """A second thread keeps replacing a directory and a note with symlinks to the outside
    while thousands of reads and appends run; not one of them may touch the outside."""
    root = tmp_path / "root"
    tool = NotesTool(root)
    (root / "sw").mkdir()
    (root / "sw" / "secret.md").write_text("inside\n")
    (root / "f.md").write_text("inside\n")
    stop = threading.Event()
    swaps = 0

    def swap_in(name: str, held: Path, target: Path) -> bool:
        os.rename(root / name, held)
        try:
            os.symlink(target, root / name)
            return True
        except FileExistsError:  # the tool re-created the name in between: fine, still inside
            return False

    def put_back(name: str, held: Path) -> None:
        while True:
            try:
                os.rename(held, root / name)
                return
            except OSError:
                # The tool may have re-created the name (append makes missing directories).
                entry = root / name
                if entry.is_symlink() or entry.is_file():
                    entry.unlink(missing_ok=True)
                else:
                    shutil.rmtree(entry, ignore_errors=True)

    def swapper() -> None:
        nonlocal swaps
        held_dir, held_file = root / "held-dir", root / "held-file"
        while not stop.is_set():
            swapped = swap_in("sw", held_dir, outside)
            swapped = swap_in("f.md", held_file, outside / "secret.md") and swapped
            time.sleep(0)
            put_back("sw", held_dir)
            put_back("f.md", held_file)
            swaps += swapped

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the threads as often as possible
    thread = threading.Thread(target=swapper)
    thread.start()
    outcomes: dict[str, int] = {}

    def both_sides_hit() -> bool:
        return swaps > 20 and outcomes.get("error", 0) > 20 and outcomes.get("success", 0) > 20

    # At least 3000 rounds; on a slow or busy machine the swapper may get few turns in that
    # time, so keep going until both sides of the race were hit (bounded, so it cannot hang).
    deadline = time.monotonic() + 60  # well inside pytest's 120 s timeout, so the counts get shown
    try:
        i = 0
        while i < 3000 or (not both_sides_hit() and time.monotonic() < deadline):
            for path in ("sw/secret.md", "f.md"):
                resp = read(tool, path) if i % 2 else append(tool, path, "a")
                assert SECRET not in resp.text
                outcomes[resp.status] = outcomes.get(resp.status, 0) + 1
            i += 1
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old_interval)
    assert swaps > 20, swaps
    # Both sides of the race were hit many times: calls that met a symlink (refused) and calls
    # that met the real entries (served).
    assert outcomes.get("error", 0) > 20 and outcomes.get("success", 0) > 20, outcomes
    assert_outside_untouched(outside)
    for path in (root / "sw" / "secret.md", root / "f.md"):
        assert set(path.read_text()) <= set("inside\na"), path


def test_prompts_override_messages(tmp_path: Path) -> None:
    tool = NotesTool(tmp_path / "root", prompts={"tool.msg.notes.appended": "ok {n} {path}"})
    assert append(tool, "a.md", "hi").text == "ok 3 a.md"


def test_agent_confirms_appends_only_and_wraps_reads(tmp_path: Path) -> None:
    from agentmaker import Agent
    from agentmaker.testing import ScriptedLLM

    tool = NotesTool(tmp_path / "root")
    script = [
        ScriptedLLM.tool_call("notes", {"action": "append", "path": "a.md", "content": "plan"}),
        ScriptedLLM.tool_call("notes", {"action": "read", "path": "a.md"}),
        "done",
    ]
    asked: list[dict] = []
    llm = ScriptedLLM(script)
    result = Agent("a", llm, tools=[tool], confirm=lambda t, p: asked.append(p) or True).run("go")
    assert asked == [{"action": "append", "path": "a.md", "content": "plan"}]
    assert [c.status for c in result.tool_calls] == ["success", "success"]
    ack, body = [m["content"] for m in llm.requests[2].messages if m["role"] == "tool"]
    assert ack == "Appended 5 characters to note a.md."
    assert body.startswith("[External content returned by tool 'notes'") and "\nplan\n" in body
