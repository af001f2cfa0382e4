"""Secrets within reach of the built-ins: a secret planted in an environment variable and in a
file outside the notes root must not reach a tool result, an error message, the transcript, the
logs or a child process's environment, whatever the (scripted) model asks for, unless the user
passes it explicitly. See docs/security.md, "Secrets"."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import sys

import pytest
from agentmaker import Agent, CLITool, MCPClient, NotesTool
from agentmaker.testing import ScriptedLLM
from reliability_support import RAW, approve

ENV_NAMES = ("AGENTMAKER_RELIABILITY_SECRET", "OPENAI_API_KEY")
#: What a CLITool child's environment holds when the user passes no ``env=``.
CHILD_ENV = {"PATH", "HOME", "LANG"}

SHELL_COMMANDS = [
    "env",
    "printenv",
    "printenv AGENTMAKER_RELIABILITY_SECRET",
    "printenv OPENAI_API_KEY",
    "cat /proc/self/environ",
    "env -i printenv",
]


@pytest.fixture
def secret(monkeypatch) -> str:
    value = "planted-" + secrets.token_hex(16)
    for name in ENV_NAMES:
        monkeypatch.setenv(name, value)
    return value


@pytest.fixture
def places(tmp_path, secret):
    """The notes root, and a secret file outside it with every kind of way in from the root."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "secret.txt"
    target.write_text(secret)
    notes = NotesTool(tmp_path / "notes")
    root = tmp_path / "notes"
    (root / "link.txt").symlink_to(target)
    (root / "dir").symlink_to(outside)
    (root / "sub").mkdir()
    os.link(target, root / "hard.txt")
    return notes, target


def escapes(target) -> list[str]:
    return [
        "../outside/secret.txt",
        str(target),
        "link.txt",
        "dir/secret.txt",
        "hard.txt",
        "sub/../../outside/secret.txt",
        "./../outside/secret.txt",
        "sub/./../../outside/secret.txt",
        "%2e%2e/outside/secret.txt",
        "..\\outside\\secret.txt",
        "link.txt\x00",
        "//" + str(target),
        "sub/" + "../" * 40 + str(target).lstrip("/"),
    ]


def turns(target) -> list:
    shell = [("shell", {"command": c}, f"sh{i}") for i, c in enumerate(SHELL_COMMANDS)]
    reads = [("notes", {"action": "read", "path": p}, f"r{i}") for i, p in enumerate(escapes(target))]
    appends = [
        ("notes", {"action": "append", "path": p, "content": "overwritten?"}, f"a{i}")
        for i, p in enumerate(["link.txt", "dir/secret.txt", "hard.txt"])
    ]
    return [
        ScriptedLLM.tool_calls(*shell),
        ScriptedLLM.tool_calls(*reads),
        ScriptedLLM.tool_calls(*appends),
        "done",
    ]


def seen_everywhere(result, caplog, capfd) -> str:
    """Everything the run produced that a person or a model could read."""
    out, err = capfd.readouterr()
    records = [(r.name, r.status, r.arguments, r.output, repr(r.data)) for r in result.tool_calls]
    return "\n".join([json.dumps(result.messages, default=repr), repr(records), caplog.text, out, err])


def child_env_names(output: str) -> set[str]:
    body = output.split("stdout:\n", 1)[1].split("\n<<<EXTERNAL", 1)[0]
    return {line.split("=", 1)[0] for line in body.splitlines() if "=" in line}


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_no_builtin_reveals_a_secret_the_model_asks_for(secret, places, caplog, capfd, entry):
    caplog.set_level(logging.DEBUG)
    notes, target = places
    agent = Agent(
        "curious",
        ScriptedLLM(turns(target)),
        tools=[CLITool(["env", "printenv", "cat"]), notes],
        confirm=approve,
    )
    result = agent.run("go") if entry == "sync" else asyncio.run(agent.arun("go"))
    assert result.final_output == "done"
    assert secret not in seen_everywhere(result, caplog, capfd)
    by_id = {r.call_id: r for r in result.tool_calls}
    assert child_env_names(by_id["sh1"].output) == CHILD_ENV  # printenv: exactly the allowlist
    assert by_id["sh4"].status == "success"  # the child's own environ was read, and held nothing
    for i, path in enumerate(escapes(target)):  # refused; a %-escape is just a literal name
        rec = by_id[f"r{i}"]
        assert rec.status == "error" or (path.startswith("%") and "does not exist" in rec.output), rec
    assert all(by_id[f"a{i}"].status == "error" for i in range(3))
    assert target.read_text() == secret  # nothing was written through a link either


def test_a_secret_passed_explicitly_does_reach_the_child(secret, caplog, capfd):
    """The control: the checks above do see the secret when the user hands it over."""
    tool = CLITool(["printenv"], env={"AGENTMAKER_RELIABILITY_SECRET": secret})
    agent = Agent(
        "given",
        ScriptedLLM([ScriptedLLM.tool_call("shell", {"command": "printenv"}), "ok"]),
        tools=[tool],
        confirm=approve,
    )
    result = agent.run("go")
    assert secret in seen_everywhere(result, caplog, capfd)
    assert child_env_names(result.tool_calls[0].output) == {"AGENTMAKER_RELIABILITY_SECRET"}


async def test_an_mcp_server_does_not_inherit_the_secret(secret, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    async with MCPClient(command=sys.executable, args=[RAW, "environ"], namespace="raw") as client:
        agent = Agent(
            "mcp",
            ScriptedLLM([ScriptedLLM.tool_call("raw_ok", {}), "ok"]),
            tools=await client.load_tools(),
            confirm=approve,
        )
        result = await agent.arun("go")
    (rec,) = result.tool_calls
    assert rec.status == "success" and '"PATH"' in rec.output  # the server's environment came back
    assert secret not in seen_everywhere(result, caplog, capfd)
    assert not any(name in rec.output for name in ENV_NAMES)
