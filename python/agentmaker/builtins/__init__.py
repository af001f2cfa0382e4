"""Built-in tools whose Python side is more than the native class: toolkits of native tools."""

from agentmaker.builtins.workspace import Workspace

__all__ = ["Workspace"]
