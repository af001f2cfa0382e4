"""Run by test_reliability_sigint.py: starts ``sleep 30`` through the entry point named by argv[1]
and waits for the test to send SIGINT. Prints one JSON line: whether KeyboardInterrupt arrived,
what is left below this process afterwards, and the output of the next run."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from agentmaker import CLITool, ToolRegistry
from agentmaker.testing import ScriptedLLM
from proc_table import descendants
from reliability_support import LONG, poll, shell_agent, silent_mcp

call = ScriptedLLM.tool_call


def start(mode: str) -> None:
    if mode == "agent":
        shell_agent([call("shell", {"command": LONG}), "x"]).run("go")
    elif mode == "agent_timeout":  # a tool timeout sends the sync run through an event loop
        shell_agent([call("shell", {"command": LONG}), "x"], tool_timeout=60).run("go")
    elif mode == "agent_async":
        asyncio.run(shell_agent([call("shell", {"command": LONG}), "x"]).arun("go"))
    elif mode == "agent_mcp":
        client = silent_mcp()
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(client.__aenter__())
            tools = loop.run_until_complete(client.load_tools())
            script = [ScriptedLLM.tool_calls(("shell", {"command": LONG}), ("raw_ok", {})), "x"]
            shell_agent(script, tools=[CLITool(["sleep"], timeout=60), *tools]).run("go")
        finally:
            loop.run_until_complete(client.aclose())
            loop.close()
    elif mode == "registry":
        reg = ToolRegistry()
        reg.register(CLITool(["sleep"], timeout=60))
        reg.execute_tool("shell", {"command": LONG})
    elif mode == "tool":
        CLITool(["sleep"], timeout=60).run({"command": LONG})
    else:
        raise SystemExit(f"unknown mode {mode}")


def main() -> None:
    interrupted = False
    try:
        start(sys.argv[1])
    except KeyboardInterrupt:
        interrupted = True
    try:
        poll(lambda: not descendants(os.getpid()), "no child process is left")
    except AssertionError:
        pass
    left = [[p.pid, p.pgid, [a.decode() for a in p.argv]] for p in descendants(os.getpid())]
    result = shell_agent([call("shell", {"command": "echo again"}), "done"]).run("go")
    out = {"interrupted": interrupted, "left": left, "next": result.tool_calls[0].output}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
