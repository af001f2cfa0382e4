"""CLITool against real subprocesses: the shell-free tokenizer, the argument gate, and the
process-group lifecycle (checked in /proc: nothing of the command's group survives a call)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from agentmaker import CLITool, ToolConfigError, ToolRegistry
from proc_table import processes
from written import whole_file


def run(tool: CLITool, command: str):
    return tool.run({"command": command})


def group_members(pgid: int) -> list[tuple[int, str]]:
    """Every process in /proc (alive or zombie) whose process group is ``pgid``."""
    return [(p.pid, p.state) for p in processes() if p.pgid == pgid]


def wait_for_pid(path: Path) -> int:
    """The pid a command wrote to ``path`` (a whole line: the shell creates the file before it
    writes), waiting for it as long as a busy machine may take to start the command."""
    return int(whole_file(path))


def open_policy(argv: list[str]) -> None:
    return None


# --- construction ---------------------------------------------------------------------------


def test_spec_flags_and_description() -> None:
    tool = CLITool(allowed_commands=["ls", "echo"], timeout=10.0, max_output_chars=4000)
    assert tool.name == "shell"
    assert tool.requires_confirmation is True
    assert tool.external_content is True
    assert tool.needs_confirmation({"command": "ls"}) is True
    assert tool.is_external_content({"command": "ls"}) is True
    assert [p.name for p in tool.get_parameters()] == ["command"]
    assert "Allowed commands: echo, ls." in tool.description
    assert tool.allowed_commands == ["echo", "ls"]
    assert all(Path(p).is_absolute() for p in tool.programs.values())
    assert "Allowed commands: (none)." in CLITool().description


def test_construction_errors_are_raised_early() -> None:
    with pytest.raises(ToolConfigError, match="'no-such-prog-zz' was not found"):
        CLITool(["ls", "no-such-prog-zz"])
    with pytest.raises(ToolConfigError, match="timeout must be positive, got 0.0"):
        CLITool(["ls"], timeout=0)
    with pytest.raises(ToolConfigError, match="max_output_chars must be a positive integer, got -1"):
        CLITool(["ls"], max_output_chars=-1)
    with pytest.raises(ToolConfigError, match="not an existing directory"):
        CLITool(["ls"], cwd="/no/such/dir")
    with pytest.raises(ToolConfigError, match="env must map str to str"):
        CLITool(["ls"], env={"A": 1})
    with pytest.raises(TypeError, match="arg_policy must be a callable"):
        CLITool(["ls"], arg_policy="nope")
    with pytest.raises(ToolConfigError, match="unknown prompt key"):
        CLITool(["ls"], prompts={"tool.msg.shell.nope": "x"})
    with pytest.raises(TypeError):
        CLITool("ls")  # a str is not a list of programs
    with pytest.raises(TypeError):
        CLITool(["ls"], 5.0)  # options are keyword-only


# --- no shell -------------------------------------------------------------------------------

OPERATORS = {
    "touch {a} ; touch {b}": "[';']",
    "touch {a} & touch {b}": "['&']",
    "touch {a} | touch {b}": "['|']",
    "touch {a} && touch {b}": "['&&']",
    "touch {a} || touch {b}": "['||']",
    "touch {a} < {b}": "['<']",
    "touch {a} > {b}": "['>']",
    "touch {a} >> {b}": "['>>']",
    "touch {a} 2>&1": "['>&']",
    "touch {a} $(touch {b})": "['$(', ')']",
    "touch {a} `touch {b}`": "['`']",
    "touch {a}\ntouch {b}": "['\\n']",
    "(touch {a})": "['(', ')']",
    "touch {a} ${{HOME}}": "['${']",
    "touch {a} $HOME": "['$']",
    "touch {a}>{b}": "['>']",
    "touch {a} |& touch {b}": "['|&']",
    "touch {a} <<EOF": "['<<']",
}


@pytest.mark.parametrize("template", list(OPERATORS))
def test_every_unquoted_shell_operator_is_refused_and_nothing_runs(template: str, tmp_path: Path) -> None:
    tool = CLITool(["touch"])
    a, b = tmp_path / "a", tmp_path / "b"
    resp = run(tool, template.format(a=a, b=b))
    assert resp.status == "error"
    assert resp.text.startswith(
        f"Error: shell operators {OPERATORS[template]} are not supported: no shell runs"
    )
    assert "quoted text is passed literally" in resp.text
    assert not a.exists() and not b.exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo 'a;b|c&&d>e'", "a;b|c&&d>e"),
        ('echo "$(id)" \'`id`\' "$HOME"', "$(id) `id` $HOME"),
        (r"echo \; \| \> \#x", "; | > #x"),
        ("echo a#b", "a#b"),
        ("echo 'x'\"y\"z", "xyz"),
        (r'echo "a\"b" "c\d"', 'a"b c\\d'),
        ("echo '' end", " end"),
        ("echo *.py ~", "*.py ~"),
        ("echo '#not a comment'", "#not a comment"),
        ("echo ＄（id）；", "＄（id）；"),
    ],
)
def test_quoting_is_literal(command: str, expected: str) -> None:
    resp = run(CLITool(["echo"]), command)
    assert resp.status == "success", resp.text
    assert resp.text == f"[exit code 0]\nstdout:\n{expected}"


def test_hash_never_silently_truncates(tmp_path: Path) -> None:
    tool = CLITool(["touch"])
    target = tmp_path / "x"
    resp = run(tool, f"touch {target} #comment")
    assert resp.status == "error"
    assert "unquoted '#'" in resp.text
    assert not target.exists()


def test_parse_errors_empty_and_disguised_commands() -> None:
    tool = CLITool(["echo"])
    assert run(tool, "echo 'abc").text == "Error: failed to parse the command (No closing quotation)"
    assert run(tool, "echo abc\\").text == "Error: failed to parse the command (No escaped character)"
    assert run(tool, "   ").text == "Error: the command is empty"
    assert tool.run({}).text == "Error: the command is empty"
    for cmd in ["echo a\rb", "echo 'a\x00b'", "echo \u202egnp.exe", "ec\u200bho x", "echo \x1b[2K"]:
        assert "control or invisible" in run(tool, cmd).text, repr(cmd)


def test_only_listed_programs_run() -> None:
    tool = CLITool(["echo"])
    assert run(tool, "rm -rf /tmp/x").text == (
        "Error: command 'rm' is not on the allow-list; allowed commands: echo"
    )
    assert run(tool, "/bin/echo x").status == "error"
    assert run(CLITool(), "echo x").text.endswith("allowed commands: (none)")


# --- argument gate --------------------------------------------------------------------------

DANGEROUS = [
    ("sh", "sh -c id", "['-c']"),
    ("bash", "bash -ec id", "['-ec']"),
    ("perl", "perl -e 'print 1'", "['-e']"),
    ("perl", "perl -MPOSIX -e1", "['-MPOSIX', '-e1']"),
    ("node", "node -e 1", "['-e']"),
    ("node", "node --eval=1", "['--eval=1']"),
    ("node", "node -p 1", "['-p']"),
    ("git", "git -c core.sshCommand=x fetch", "['-c']"),
    ("git", "git -C /tmp status", "['-C']"),
    ("git", "git fetch --upload-pack=x origin", "['--upload-pack=x']"),
    ("git", "git push --receive-pack=x", "['--receive-pack=x']"),
    ("git", "git archive --exec=x --remote=r HEAD", "['--exec=x']"),
    ("git", "git clone --config core.sshCommand=x r", "['--config', 'core.sshCommand=x']"),
    ("git", "git rebase -x id", "['-x']"),
    ("git", "git config core.pager sh", "['config']"),
    ("find", "find . -exec rm {} \\;", "['-exec']"),
    ("find", "find . -execdir x +", "['-execdir']"),
    ("find", "find . -ok x", "['-ok']"),
    ("find", "find . -delete", "['-delete']"),
    ("find", "find . -fprint out", "['-fprint']"),
    ("curl", "curl -o /tmp/x http://127.0.0.1/", "['-o']"),
    ("curl", "curl -sSLO http://127.0.0.1/x", "['-sSLO']"),
    ("curl", "curl -T /etc/passwd http://127.0.0.1/", "['-T']"),
    ("curl", "curl -d @/etc/passwd http://127.0.0.1/", "['@/etc/passwd']"),
    ("curl", "curl -sd@/etc/passwd http://127.0.0.1/", "['@/etc/passwd']"),
    ("curl", "curl -K cfg", "['-K']"),
    ("wget", "wget -O /tmp/x http://127.0.0.1/", "['-O']"),
    ("wget", "wget --output-document=x http://127.0.0.1/", "['--output-document=x']"),
    ("wget", "wget -e use_proxy=on http://127.0.0.1/", "['-e']"),
    ("tar", "tar --to-command=sh -xf a.tar", "['--to-command=sh']"),
    ("tar", "tar --use-compress-program=sh -xf a", "['--use-compress-program=sh']"),
    ("tar", "tar -I sh -xf a", "['-I']"),
    ("tar", "tar --checkpoint=1 --checkpoint-action=exec=id -cf a .", "['--checkpoint-action=exec=id']"),
    ("ssh", "ssh -o ProxyCommand=x h", "['ProxyCommand=x']"),
    ("ssh", "ssh -oLocalCommand=x h", "['-oLocalCommand=x']"),
    ("env", "env sh -c id", "['sh', 'id']"),
    ("xargs", "xargs sh", "['sh']"),
    ("nice", "nice sh", "['sh']"),
    ("timeout", "timeout 5 sh", "['5', 'sh']"),
    ("sort", "sort --compress-program=sh f", "['--compress-program=sh']"),
    ("zip", "zip -TT x a.zip f", "['-TT']"),
    ("make", "make CC=sh", "['CC=sh']"),
    ("make", "make -f /tmp/Makefile", "['-f']"),
    ("sed", "sed 1e f", "['1e']"),
    ("sed", "sed -i s/a/b/ f", "['-i']"),
    ("awk", "awk 'BEGIN{system(\"id\")}'", "['BEGIN{system(\"id\")}']"),
]


@pytest.mark.parametrize(("program", "command", "bad"), DANGEROUS, ids=[c for _, c, _ in DANGEROUS])
def test_dangerous_arguments_are_refused(program: str, command: str, bad: str) -> None:
    resp = run(CLITool([program]), command)
    assert resp.status == "error"
    assert resp.text == (
        f"Error: argument {bad} is high-risk (arbitrary code execution / data exfiltration / "
        "reverse shell) and is rejected by default; have the app configure arg_policy to allow it if truly needed"
    )


def test_interpreter_inline_code_is_refused_for_the_running_python() -> None:
    tool = CLITool([sys.executable])
    for cmd in ["-c 'print(1)'", "-Ic pass", "-m http.server", "-mpip"]:
        assert "is high-risk" in run(tool, f"{sys.executable} {cmd}").text, cmd


def test_false_positives_of_the_reference_pass(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("b\na\n")
    (tmp_path / "script.py").write_text("import sys; print(sys.argv[1:])\n")
    tool = CLITool(["ls", "sort", "tar", "echo", sys.executable], cwd=str(tmp_path))
    assert run(tool, "ls -T 4").status == "success"
    assert run(tool, "sort -T /tmp data").text == "[exit code 0]\nstdout:\na\nb"
    (tmp_path / "list").write_text("data\n")
    assert run(tool, f"tar -T list -cf {tmp_path / 'a.tar'}").status == "success"
    assert run(tool, "echo -K -T --config -o ProxyCommand").status == "success"
    resp = run(tool, f"{sys.executable} script.py -c -m")
    assert resp.text == "[exit code 0]\nstdout:\n['-c', '-m']"


def test_refused_commands_do_not_run(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    tool = CLITool(["find"], cwd=str(tmp_path))
    assert run(tool, "find . -delete").status == "error"
    assert run(tool, "find . -name victim -exec rm {} +").status == "error"
    assert victim.read_text() == "keep"


def test_arg_policy_replaces_the_gate() -> None:
    seen: list[list[str]] = []

    def policy(argv: list[str]) -> str | None:
        seen.append(argv)
        return "only greetings" if "bye" in argv else None

    tool = CLITool(["sh", "echo"], arg_policy=policy)
    assert run(tool, "sh -c 'echo via sh'").text == "[exit code 0]\nstdout:\nvia sh"
    assert run(tool, "echo bye").text == "only greetings"
    assert seen == [["sh", "-c", "echo via sh"], ["echo", "bye"]]

    def broken(argv: list[str]) -> str | None:
        raise RuntimeError("policy exploded")

    resp = run(CLITool(["echo"], arg_policy=broken), "echo x")
    assert resp.status == "error"
    assert "policy exploded" in resp.text and "was not run" in resp.text
    resp = run(CLITool(["echo"], arg_policy=lambda argv: 42), "echo x")
    assert "must return None or a str, got int" in resp.text


# --- environment and I/O ---------------------------------------------------------------------


def test_a_secret_in_the_parent_environment_never_reaches_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTMAKER_TEST_SECRET", "s3cr3t-value")
    tool = CLITool(["env", "cat"])
    env_out = run(tool, "env").text
    assert "s3cr3t" not in env_out
    names = {line.split("=", 1)[0] for line in env_out.split("\n")[2:]}
    assert names <= {"PATH", "HOME", "LANG"}
    assert "s3cr3t" not in run(tool, "cat /proc/self/environ").text
    explicit = CLITool(["env"], env={"ONLY": "this"})
    assert run(explicit, "env").text == "[exit code 0]\nstdout:\nONLY=this"


def test_stdin_is_dev_null() -> None:
    start = time.monotonic()
    resp = run(CLITool(["cat"], timeout=20), "cat")
    assert time.monotonic() - start < 5
    assert resp.text == "[exit code 0]\n(no output)"


def test_argv0_is_the_listed_name() -> None:
    tool = CLITool(["sh"], arg_policy=open_policy)
    assert run(tool, "sh -c 'echo $0'").text == "[exit code 0]\nstdout:\nsh"


def test_non_zero_exit_is_an_error_with_output() -> None:
    resp = run(CLITool(["ls"]), "ls /definitely/not/here")
    assert resp.status == "error"
    assert resp.text.startswith("[exit code 2]\nstderr:\n")
    assert "definitely" in resp.text
    assert resp.data == {"returncode": 2}


def test_leading_whitespace_is_kept() -> None:
    resp = run(
        CLITool(["printf"]) if Path("/usr/bin/printf").exists() else CLITool(["echo"]),
        "printf '  a\\n    b\\n\\n'",
    )
    assert resp.text == "[exit code 0]\nstdout:\n  a\n    b"


def test_binary_and_invalid_utf8_output_is_bounded_and_lossy() -> None:
    tool = CLITool(["head", "printf"], max_output_chars=200)
    resp = run(tool, "head -c 200000 /dev/urandom")
    assert resp.status == "partial"
    assert len(resp.text) < 400
    assert resp.text.endswith("…(output truncated, over 200 characters)")
    resp = run(tool, "printf 'ok \\377\\376 end'")
    assert resp.text == "[exit code 0]\nstdout:\nok \ufffd\ufffd end"


# --- process lifecycle -----------------------------------------------------------------------


def tagged_processes(tag: bytes) -> list[int]:
    """Living processes with ``tag`` in their environment: other tests and other jobs on the
    machine run the same commands, and only the ones started here are this test's to judge."""
    found = []
    for p in processes():
        try:
            environ = Path(f"/proc/{p.pid}/environ").read_bytes()
        except OSError:
            continue
        if tag in environ.split(b"\0"):
            found.append(p.pid)
    return found


def test_yes_flood_is_stopped_at_the_cap_within_moments() -> None:
    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    tool = CLITool(["yes"], max_output_chars=1000, timeout=30, env={"AGENTMAKER_TEST_TAG": tag})
    start = time.monotonic()
    resp = run(tool, "yes")
    assert time.monotonic() - start < 5
    assert resp.status == "partial"
    assert resp.data == {"returncode": -9, "truncated": True}
    body = resp.text.split("stdout:\n", 1)[1]
    assert body.startswith("y\ny\n")
    assert body.endswith("\n…(output truncated, over 1000 characters)")
    assert len(body) < 1100
    # Reaped before the call returned: nothing started with the tag is left.
    assert tagged_processes(f"AGENTMAKER_TEST_TAG={tag}".encode()) == []


def test_grandchild_holding_the_pipe_past_the_timeout_is_killed_and_reaped(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    tool = CLITool(["sh"], timeout=0.5, arg_policy=open_policy)
    start = time.monotonic()
    resp = run(tool, f"sh -c 'echo $$ > {pidfile}; (sleep 60; echo late) & sleep 60 & exec sleep 60'")
    elapsed = time.monotonic() - start
    assert 0.45 < elapsed < 10, elapsed
    assert resp.status == "error"
    assert resp.text.startswith("Error: command timed out (>0.5s) and was terminated")
    assert resp.data == {"returncode": -9, "timed_out": True}
    assert group_members(wait_for_pid(pidfile)) == []


def test_a_finished_command_is_not_turned_into_a_timeout_by_a_background_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    tool = CLITool(["sh"], timeout=10, arg_policy=open_policy)
    start = time.monotonic()
    resp = run(tool, f"sh -c 'echo $$ > {pidfile}; sleep 60 & echo done'")
    assert time.monotonic() - start < 5
    assert resp.status == "success"
    assert resp.text == (
        "[exit code 0]\n(processes the command left running in the background were terminated)\nstdout:\ndone"
    )
    assert resp.data == {"returncode": 0, "background_killed": True}
    assert group_members(wait_for_pid(pidfile)) == []


def test_background_processes_detached_from_the_output_do_not_survive(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    tool = CLITool(["sh"], arg_policy=open_policy)
    resp = run(tool, f"sh -c 'echo $$ > {pidfile}; sleep 60 >/dev/null 2>&1 & echo ok'")
    assert resp.text == "[exit code 0]\nstdout:\nok"
    assert group_members(wait_for_pid(pidfile)) == []


def wait_for_file_command(flag: Path) -> str:
    """A command that ends only once ``flag`` exists."""
    return f"sh -c 'while [ ! -e {flag} ]; do sleep 0.01; done; echo seen'"


def test_calls_release_the_gil(tmp_path: Path) -> None:
    """The command waits for a file this thread creates after 50 turns of Python code: a call
    holding the GIL would keep this thread from running until the command timed out."""
    flag = tmp_path / "flag"
    tool = CLITool(["sh"], timeout=30, arg_policy=open_policy)
    done = threading.Event()
    responses = []
    worker = threading.Thread(
        target=lambda: (responses.append(run(tool, wait_for_file_command(flag))), done.set())
    )
    worker.start()
    spins = 0
    while not done.is_set():
        spins += 1
        if spins == 50:
            flag.touch()
        time.sleep(0.001)
    worker.join()
    assert responses[0].text == "[exit code 0]\nstdout:\nseen"
    assert spins >= 50


async def test_arun_and_cancellation_kill_the_group(tmp_path: Path) -> None:
    tool = CLITool(["echo", "sh"], arg_policy=open_policy)
    resp = await tool.arun({"command": "echo async"})
    assert resp.text == "[exit code 0]\nstdout:\nasync"
    pidfile = tmp_path / "pid"
    task = asyncio.ensure_future(tool.arun({"command": f"sh -c 'echo $$ > {pidfile}; sleep 60 & sleep 60'"}))
    pgid = await asyncio.to_thread(wait_for_pid, pidfile)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if not group_members(pgid):
            break
        await asyncio.sleep(0.02)
    assert group_members(pgid) == []


async def test_arun_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """The command waits for a file another task creates after 10 turns of the loop: an arun
    that blocked the loop would keep that task from running until the command timed out."""
    flag = tmp_path / "flag"
    tool = CLITool(["sh"], timeout=30, arg_policy=open_policy)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            if ticks == 10:
                flag.touch()
            await asyncio.sleep(0.01)

    t = asyncio.ensure_future(ticker())
    resp = await tool.arun({"command": wait_for_file_command(flag)})
    t.cancel()
    assert resp.text == "[exit code 0]\nstdout:\nseen"
    assert ticks >= 10


def test_through_the_registry() -> None:
    registry = ToolRegistry()
    registry.register(CLITool(["echo"]))
    assert registry.execute_tool("shell", {"command": "echo via registry"}).text == (
        "[exit code 0]\nstdout:\nvia registry"
    )
    assert registry.execute_tool("shell", {"command": "echo a; echo b"}).status == "error"


def test_prompts_override_messages() -> None:
    tool = CLITool(["echo"], prompts={"tool.msg.shell.exit_code": "[rc={code}]"})
    assert run(tool, "echo x").text == "[rc=0]\nstdout:\nx"


async def test_async_registry_path_is_cancellable(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(CLITool(["echo", "sh"], arg_policy=open_policy))
    resp = await registry.aexecute_tool("shell", {"command": "echo via aexecute"})
    assert resp.text == "[exit code 0]\nstdout:\nvia aexecute"
    pidfile = tmp_path / "pid"
    task = asyncio.ensure_future(
        registry.aexecute_tool("shell", {"command": f"sh -c 'echo $$ > {pidfile}; exec sleep 60'"})
    )
    pgid = await asyncio.to_thread(wait_for_pid, pidfile)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if not group_members(pgid):
            break
        await asyncio.sleep(0.02)
    assert group_members(pgid) == []


def test_descendants_that_leave_the_group_are_killed_too(tmp_path: Path) -> None:
    """A daemonizing child (setsid) is beyond killpg, but it is still a descendant of the
    command: the supervisor finds it (own session or re-parented to the supervisor) and kills it."""
    pidfile = tmp_path / "pid"
    tool = CLITool(["sh"], arg_policy=open_policy)
    start = time.monotonic()
    script = (
        f'setsid sh -c "echo \\$\\$ > {pidfile}; exec sleep 60" >/dev/null 2>&1 & '
        f"while [ ! -s {pidfile} ]; do sleep 0.01; done; echo bye"
    )
    resp = run(tool, f"sh -c '{script}'")
    assert time.monotonic() - start < 5
    assert resp.text == "[exit code 0]\nstdout:\nbye"
    escapee = wait_for_pid(pidfile)
    assert not Path(f"/proc/{escapee}").exists(), "the escaped descendant survived"


def test_agent_confirms_and_wraps_cli_output() -> None:
    from agentmaker import Agent
    from agentmaker.testing import ScriptedLLM

    llm = ScriptedLLM([ScriptedLLM.tool_call("shell", {"command": "echo hi"}), "done"])
    refused = Agent("a", llm, tools=[CLITool(["echo"])]).run("go")
    assert refused.tool_calls[0].status == "not_confirmed"

    seen: list[tuple[str, dict]] = []
    llm = ScriptedLLM([ScriptedLLM.tool_call("shell", {"command": "echo hi"}), "done"])
    agent = Agent(
        "a", llm, tools=[CLITool(["echo"])], confirm=lambda tool, p: seen.append((tool.name, p)) or True
    )
    result = agent.run("go")
    assert seen == [("shell", {"command": "echo hi"})]
    assert result.tool_calls[0].status == "success"
    content = next(m["content"] for m in llm.requests[1].messages if m["role"] == "tool")
    assert "[exit code 0]\nstdout:\nhi" in content
    assert content.startswith("[External content returned by tool 'shell'")


def test_no_descriptor_or_zombie_leaks_under_concurrency() -> None:
    """Many calls from several threads, mixing success, timeout, flood and refusal, leave the
    host with the same open descriptors and no child process of theirs."""
    tool = CLITool(["echo", "sleep", "yes"], timeout=0.3, max_output_chars=500)
    commands = ["echo ok", "sleep 5", "yes", "echo a | b", "sleep 0.01"]

    def fd_count() -> int:
        return len(os.listdir("/proc/self/fd"))

    def my_children() -> list[int]:
        me = os.getpid()
        kids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                if int(stat[stat.rindex(")") + 2 :].split()[1]) == me:
                    kids.append(int(entry))
        return kids

    run(tool, "echo warm-up")
    before = fd_count()
    # Children of this process that earlier tests left on purpose (the isolation pool's fork
    # server and its resource tracker live as long as the process) are not the calls' doing.
    children_before = set(my_children())
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for i in range(10):
                cmd = commands[(i + offset) % len(commands)]
                resp = run(tool, cmd)
                assert resp.status in ("success", "partial", "error"), resp.text
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert fd_count() == before
    assert set(my_children()) - children_before == set()
