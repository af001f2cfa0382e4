"""agentmaker: the tool layer for LLM agents, with a Rust core.

Define tools with ``@tool`` or by subclassing :class:`Tool`, collect them in a
:class:`ToolRegistry`, and let an :class:`Agent` call them.
"""

from agentmaker._native import Tool, ToolParameter, ToolResponse
from agentmaker._registry import ToolRegistry
from agentmaker.errors import (
    AgentmakerError,
    AgentRunFlow,
    ToolConfigError,
    ToolError,
    ToolRegistrationError,
)

__all__ = [
    "AgentRunFlow",
    "AgentmakerError",
    "Tool",
    "ToolConfigError",
    "ToolError",
    "ToolParameter",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolResponse",
]

__version__ = "0.1.0"
