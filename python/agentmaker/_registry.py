"""The Python face of the Rust tool registry: async execution and callable registration."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Callable

from agentmaker._native import Tool, ToolResponse
from agentmaker._native import ToolRegistry as _NativeRegistry

__all__ = ["ToolRegistry"]


class ToolRegistry(_NativeRegistry):
    """Holds the tools an agent may call, keyed by name, in registration order.

    Registration checks the name rule ``^[a-zA-Z0-9_-]{1,64}$``, builds the tool's JSON Schema
    and compiles its validator once; every rendering and every call reuses them.
    """

    def to_openai_schema(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The ``tools`` argument for OpenAI-style function calling.

        ``names`` renders only those tools, in that order. The returned dicts are cached and
        shared between calls: copy one before mutating it.
        """
        return self._openai_tools(names)

    async def aexecute_tool(self, name: str, parameters: dict[str, Any]) -> ToolResponse:
        """Async :meth:`execute_tool`: async tools are awaited on the running loop; synchronous
        ones run on a worker thread so the loop is never blocked."""
        admitted = self._admit(name, parameters)
        if type(admitted) is ToolResponse:
            return admitted
        tool, kind = admitted
        try:
            result = await tool.arun(parameters)
        except Exception as exc:  # noqa: BLE001 - the model gets the error; flow control re-raises
            return self._exception(name, exc)
        return self._wrap(name, kind, result)

    def register_callable(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        overwrite: bool = False,
        **flags: Any,
    ) -> Tool:
        """Infer a tool from a typed function exactly like ``@tool`` and register it."""
        from agentmaker._callable import from_callable

        tool = from_callable(func, name=name, description=description, **flags)
        self.register(tool, overwrite=overwrite)
        return tool

    def register_function(
        self,
        func: Callable[[dict[str, Any]], Any],
        name: str,
        description: str,
        parameters: Iterable[Any] | None = None,
        *,
        overwrite: bool = False,
        **flags: Any,
    ) -> Tool:
        """Register ``func(parameters_dict)`` with hand-written ``ToolParameter``s (no inference)."""
        from agentmaker._callable import function_tool

        tool = function_tool(func, name, description, list(parameters or ()), **flags)
        self.register(tool, overwrite=overwrite)
        return tool
