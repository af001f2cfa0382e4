"""Serve a registry as an MCP server and call it from an MCP client.

The server runs in this process on 127.0.0.1 (a free port); the client is agentmaker's own
MCPClient, but any MCP client works the same way. Every served call goes through the same
gates as an agent's call: a tool that needs confirmation is asked about through the client
(MCP elicitation), and refused when the client cannot be asked.

To serve the same tools to a desktop MCP client over stdio instead, point it at:
    python -m agentmaker serve mcp_server:registry
(run from this directory).
"""

from __future__ import annotations

import asyncio
import contextlib

from agentmaker import MCPClient, ToolRegistry, tool


@tool(read_only=True, idempotent=True)
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@tool(requires_confirmation=True, destructive=True)
def delete_note(title: str) -> str:
    """Delete a note by its title."""
    return f"deleted {title}"


registry = ToolRegistry()
registry.register(multiply)
registry.register(delete_note)


async def main() -> None:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(registry.aserve_mcp(port=0, on_ready=ready.set_result))
    url = await ready
    print("serving on 127.0.0.1")
    async with MCPClient(url=url, namespace="calc", requires_confirmation=False) as client:
        tools = {t.remote_name: t for t in await client.load_tools()}
        print("tools:", ", ".join(sorted(tools)))
        print("multiply ->", (await tools["multiply"].arun({"a": 6, "b": 7})).text)
        refused = await tools["delete_note"].arun({"title": "todo"})
        print("delete_note refused:", "does not support elicitation" in refused.text)
    server.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await server


if __name__ == "__main__":
    asyncio.run(main())
