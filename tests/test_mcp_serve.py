"""A registry served over MCP on stdio (``python -m agentmaker serve``), talked to by the
official Python SDK client and by our own MCPClient, in real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import agentmaker
from agentmaker import Agent, MCPClient, ToolRegistry, _native
from agentmaker.testing import ScriptedLLM
from mcp.client.stdio import stdio_client

from mcp import ClientSession, StdioServerParameters

TESTS = Path(__file__).resolve().parent
# The agentmaker the tests import (installed in CI, the source tree in a dev setup): the
# server processes must run the same build.
PYTHON_DIR = str(Path(agentmaker.__file__).resolve().parents[1])


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PYTHON_DIR, str(TESTS)])
    return env


def serve_args(target: str = "mcp_servers.served_tools:registry") -> list[str]:
    return ["-m", "agentmaker", "serve", target]


async def agent_text(name: str, arguments: dict) -> str:
    """What an agent's model reads for this call of the same tools."""
    from mcp_servers import served_tools

    llm = ScriptedLLM([ScriptedLLM.tool_call(name, arguments, call_id="c1"), "done"])
    result = await Agent("a", llm, tools=served_tools.build()).arun("go")
    return result.tool_calls[0].output


async def test_the_official_client_lists_and_calls_over_stdio():
    # `build` is a function returning the registry: the command line calls it.
    params = StdioServerParameters(
        command=sys.executable, args=serve_args("mcp_servers.served_tools:build"), env=server_env()
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "agentmaker"
        assert init.capabilities.tools.list_changed is True
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert sorted(tools) == ["add", "add_where", "nap", "point", "whoami", "wipe"]
        add = tools["add"]
        assert add.description == "Add two integers."
        assert add.input_schema == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }
        assert add.annotations.read_only_hint is True
        assert add.annotations.idempotent_hint is True
        assert add.annotations.open_world_hint is False
        assert add.annotations.destructive_hint is None
        assert tools["wipe"].annotations.destructive_hint is True
        assert tools["whoami"].annotations is None
        assert tools["point"].output_schema["properties"] == {
            "x": {"type": "integer"},
            "y": {"type": "integer"},
        }

        done = await session.call_tool("add", {"a": 2, "b": 40})
        assert (done.is_error, done.content[0].text, done.structured_content) == (False, "42", {"result": 42})
        pt = await session.call_tool("point", {"x": 1, "y": 2})
        assert pt.structured_content == {"x": 1, "y": 2}

        bad = await session.call_tool("add", {"a": 2, "b": "forty"})
        assert bad.is_error is True
        assert bad.content[0].text == await agent_text("add", {"a": 2, "b": "forty"})
        assert "failed parameter validation" in bad.content[0].text

        unknown = await session.call_tool("nope", {})
        assert unknown.is_error is True
        assert unknown.content[0].text == await agent_text("nope", {})

        # No elicitation callback: the client cannot be asked, so the call is refused.
        refused = await session.call_tool("wipe", {"path": "/tmp/x"})
        assert refused.is_error is True
        assert refused.content[0].text == (
            "Error: tool 'wipe' is a high-risk operation and needs confirmation, but this MCP client "
            "does not support elicitation, so no one can be asked; the call was refused."
        )


async def test_a_tool_that_prints_does_not_corrupt_the_stream(tmp_path):
    (tmp_path / "noisy.py").write_text(
        "from agentmaker import tool\n"
        "@tool\n"
        "def shout(word: str) -> str:\n"
        "    '''Print, then answer.'''\n"
        "    print('NOISE ' * 50)\n"
        "    return word.upper()\n"
        "def tools():\n"
        "    return [shout]\n"
    )
    env = server_env()
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=serve_args("noisy:tools"), env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out = await session.call_tool("shout", {"word": "hi"})
        assert (out.is_error, out.content[0].text) == (False, "HI")


async def test_our_client_loads_served_tools_into_an_agent():
    """A registry served in one process, loaded into another registry, called by an agent."""
    client = MCPClient(
        command=sys.executable,
        args=serve_args("mcp_servers.served_tools:tools"),
        env={"PYTHONPATH": server_env()["PYTHONPATH"]},
        namespace="far",
        requires_confirmation=False,
    )
    async with client:
        reg = ToolRegistry()
        reg.register_all(await client.load_tools())
        assert reg.names() == ["far_add", "far_whoami"]
        llm = ScriptedLLM([ScriptedLLM.tool_call("far_add", {"a": 20, "b": 22}), "42 it is"])
        result = await Agent("a", llm, tools=reg).arun("add")
        assert result.tool_calls[0].status == "success"
        assert "42" in result.tool_calls[0].output
        pid = (await reg.aexecute_tool("far_whoami", {})).text
        assert pid.strip() != str(os.getpid())


def test_the_command_line_says_what_is_wrong():
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "agentmaker", "serve", *args],
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert "expected package.module:attr" in run("mcp_servers.served_tools").stderr
    assert "has no attribute 'nothing'" in run("mcp_servers.served_tools:nothing").stderr
    assert "expected a ToolRegistry, a list of tools" in run("mcp_servers.served_tools:Point").stderr
    remote = run("mcp_servers.served_tools:registry", "--transport", "http", "--host", "0.0.0.0")
    assert remote.returncode != 0
    assert "allow_remote=True" in remote.stderr


def test_serving_needs_a_known_transport():
    import asyncio

    reg = ToolRegistry()
    try:
        asyncio.run(reg.aserve_mcp("carrier-pigeon"))
    except ValueError as exc:
        assert "transport must be 'http' or 'stdio'" in str(exc)
    else:
        raise AssertionError("no error")
    assert _native._McpServer is not None
