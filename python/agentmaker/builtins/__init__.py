"""The built-in tools. The native ones are written in Rust (``src/builtins/``) and exposed by
``agentmaker._native``; a built-in with a Python side (a toolkit of native tools, say) gets a
module of its own here."""

from agentmaker._native import CalculatorTool, CLITool, FetchTool, NotesTool, SearchTool
from agentmaker.builtins.workspace import Workspace

__all__ = ["CLITool", "CalculatorTool", "FetchTool", "NotesTool", "SearchTool", "Workspace"]
