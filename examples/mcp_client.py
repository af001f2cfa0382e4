"""Use the tools of an MCP server: here a small calculator server written with the official
Python `mcp` SDK, started by this same script as a child process (`--serve`).

Run: python examples/mcp_client.py        (needs `pip install mcp`)
"""

from __future__ import annotations

import asyncio
import sys


def serve() -> None:
    # SDK 2.x renamed FastMCP to MCPServer; a type checker sees only one of the two.
    try:
        from mcp.server.mcpserver import MCPServer as Server  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        from mcp.server.fastmcp import FastMCP as Server  # type: ignore[attr-defined,no-redef,assignment,unused-ignore]

    server = Server("calculator", log_level="WARNING")

    @server.tool()
    def multiply(a: float, b: float) -> float:
        """Multiply two numbers."""
        return a * b

    server.run("stdio")


async def main() -> None:
    from agentmaker import MCPClient, ToolRegistry

    registry = ToolRegistry()
    async with MCPClient(command=sys.executable, args=[__file__, "--serve"], namespace="calc") as client:
        for t in await client.load_tools():
            registry.register(t)
            print(f"loaded {t.name} (origin {t.origin}, confirmation {t.requires_confirmation})")
        result = await registry.aexecute_tool("calc_multiply", {"a": 6, "b": 7})
        print(f"calc_multiply -> {result.text}")
        bad = await registry.aexecute_tool("calc_multiply", {"a": "six", "b": 7})
        print(f"invalid arguments are caught locally: {bad.status}")
    after = await registry.aexecute_tool("calc_multiply", {"a": 1, "b": 2})
    print(f"after the block: {after.status}")


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        asyncio.run(main())
