"""The Python face of the Rust tool registry: async execution and callable registration."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from agentmaker._native import Tool, ToolResponse
from agentmaker._native import ToolRegistry as _NativeRegistry

__all__ = ["ToolRegistry"]


class ToolRegistry(_NativeRegistry):
    """Holds the tools an agent may call, keyed by name, in registration order.

    Registration checks the name rule and the tool's parameters or schema; the schema, its
    validator and the provider renderings (``to_openai_schema``, ``to_anthropic_schema``,
    ``to_gemini_schema``) are built on first use and reused until the tool is registered again.
    """

    def aexecute_tool(self, name: str, parameters: dict[str, Any]) -> Coroutine[Any, Any, ToolResponse]:
        """Async :meth:`execute_tool`: async tools are awaited on the running loop; synchronous
        ones run on a worker thread so the loop is never blocked.

        For an MCP tool, inside a running loop, what comes back is the call's own future (an
        ``McpCallFuture``, which is also a coroutine). Like a coroutine it does nothing until
        it is awaited, gathered or run as a task; unlike one, ``gather`` makes no task for it,
        which matters when hundreds of calls are gathered."""
        unsent = self._mcp_unsent(name, parameters)
        return self._aexecute(name, parameters) if unsent is None else unsent

    # asyncio.iscoroutinefunction (and inspect's, from Python 3.12) still says True.
    if hasattr(inspect, "markcoroutinefunction"):
        aexecute_tool = inspect.markcoroutinefunction(aexecute_tool)
    else:  # Python 3.11
        aexecute_tool._is_coroutine = asyncio.coroutines._is_coroutine  # type: ignore[attr-defined]

    async def _aexecute(self, name: str, parameters: dict[str, Any]) -> ToolResponse:
        admitted = self._admit(name, parameters)
        if type(admitted) is ToolResponse:
            return admitted
        try:
            if type(admitted) is not tuple:  # an MCP call, already sent
                return await admitted  # type: ignore[no-any-return]
            tool, kind = admitted
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
