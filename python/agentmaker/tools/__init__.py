"""Tools: ``@tool`` and ``FunctionTool`` (``decorator``), a function's signature and docstring
to a JSON Schema (``signature``, ``docstring``, ``schema/``), what a tool's return value becomes
(``return_values``), the record of one call (``call_record``), the ``ToolRegistry`` subclass
(``registry``), ``Toolkit`` and the provider renderings of a bare schema (``render``)."""

from agentmaker._native import Tool, ToolParameter, ToolPermissions, ToolResponse
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.decorator import FunctionTool, ToolFlags, tool
from agentmaker.tools.registry import ToolRegistry
from agentmaker.tools.run_context import RunContext
from agentmaker.tools.status import RunStatus, ToolCallStatus, ToolStatus
from agentmaker.tools.toolkit import Toolkit

__all__ = [
    "FunctionTool",
    "RunContext",
    "RunStatus",
    "Tool",
    "ToolCallRecord",
    "ToolCallStatus",
    "ToolFlags",
    "ToolParameter",
    "ToolPermissions",
    "ToolRegistry",
    "ToolResponse",
    "ToolStatus",
    "Toolkit",
    "tool",
]
