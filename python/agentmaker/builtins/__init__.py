"""The built-in tools. The native ones are written in Rust (``src/builtins/``) and exposed by
``agentmaker._native``; a built-in with a Python side gets a module of its own here."""

from agentmaker._native import CalculatorTool, CLITool, NotesTool, SearchTool, SkillsTool
from agentmaker.builtins.user_input import UserInputTool

__all__ = ["CLITool", "CalculatorTool", "NotesTool", "SearchTool", "SkillsTool", "UserInputTool"]
