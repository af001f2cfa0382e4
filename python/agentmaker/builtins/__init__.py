"""The built-in tools. The native ones are written in Rust (``src/builtins/``) and exposed by
``agentmaker._native``; a built-in with a Python side (a toolkit of native tools, say) gets a
module of its own here."""

from agentmaker._native import CalculatorTool, CLITool, FetchTool, NotesTool, SearchTool, SkillsTool
from agentmaker.builtins.user_input import UserInputTool
from agentmaker.builtins.workspace import Workspace

__all__ = [
    "CLITool",
    "CalculatorTool",
    "FetchTool",
    "NotesTool",
    "SearchTool",
    "SkillsTool",
    "UserInputTool",
    "Workspace",
]
