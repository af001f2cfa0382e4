"""MCP. The client (``MCPClient``, ``MCPTool``) and the server's protocol are in the Rust core;
here is the host of a served registry: ``serve`` (each call through the agent's pipeline),
``serve_workers`` (threads taking sync calls from the server's queue), ``served_tools`` (the
tool list and structured results) and ``progress`` (``report_progress``)."""

from agentmaker._native import MCPClient, MCPTool
from agentmaker.mcp.progress import report_progress
from agentmaker.mcp.serve import aserve_mcp, serve_mcp

__all__ = ["MCPClient", "MCPTool", "aserve_mcp", "report_progress", "serve_mcp"]
