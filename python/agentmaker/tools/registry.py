"""The Python face of the Rust tool registry: async execution and callable registration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from agentmaker._native import Tool, ToolResponse
from agentmaker._native import ToolRegistry as _NativeRegistry
from agentmaker.tools.awaited import complete
from agentmaker.tools.decorator import FunctionTool, ToolFlags, from_callable, function_tool

if TYPE_CHECKING:
    from typing import Unpack

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["ToolRegistry", "serve_with"]

# The functions behind serve_mcp and aserve_mcp. Serving runs each call through the agent's
# executor, a layer above this one, so agentmaker.mcp.serve hands them in when it is imported
# (`import agentmaker` imports it before any registry can be made).
_serving: dict[str, Callable[..., Any]] = {}


def serve_with(serve: Callable[..., None], aserve: Callable[..., Awaitable[None]]) -> None:
    """Installs the MCP server that :meth:`ToolRegistry.serve_mcp` and ``aserve_mcp`` run."""
    _serving["sync"] = serve
    _serving["async"] = aserve


class ToolRegistry(_NativeRegistry):
    """Holds the tools an agent may call, keyed by name, in registration order.

    Registration checks the name rule and the tool's parameters or schema; the schema, its
    validator and the provider renderings (``to_openai_schema``, ``to_anthropic_schema``,
    ``to_gemini_schema``) are built on first use and reused until the tool is registered again.
    """

    # Names registered with deferred=True: not offered to the model until a tool_search finds them.
    _deferred: frozenset[str] = frozenset()

    def register(self, tool: Tool, overwrite: bool = False, *, deferred: bool = False) -> None:
        """Add ``tool`` under its name (``overwrite=True`` replaces one of the same name).

        ``deferred=True``: an Agent does not offer the tool to the model at first; a
        ``ToolSearchTool`` search (or ``action="get"`` with its name) finds it, and from then on
        the run offers it. It keeps large or rarely used tools out of every request. Registering
        the name again without ``deferred`` offers it normally."""
        super().register(tool, overwrite)
        name = tool.name
        if deferred:
            self._deferred = self._deferred | {name}
        elif name in self._deferred:
            self._deferred = self._deferred - {name}

    def unregister(self, name: str) -> Tool:
        tool = super().unregister(name)
        if name in self._deferred:
            self._deferred = self._deferred - {name}
        return tool

    @property
    def deferred(self) -> frozenset[str]:
        """The names registered with ``deferred=True``."""
        return self._deferred

    async def aexecute_tool(self, name: str, parameters: dict[str, Any] | str) -> ToolResponse:
        """Async :meth:`execute_tool`: async tools (and MCP calls) are awaited on the running
        loop; synchronous ones run on a worker thread so the loop is never blocked. The
        arguments are a dict or the JSON text of an object, as a model sends them.

        A coroutine like any other: nothing happens until it runs, and cancelling the task that
        runs it cancels the tool's ``arun`` (an MCP call is cancelled at the server too)."""
        started = self._admit(name, parameters)
        if type(started) is ToolResponse:  # refused, or a built-in that never blocks
            return started
        return await complete(started)  # type: ignore[no-any-return]

    def serve_mcp(self, transport: str = "stdio", **options: Any) -> None:
        """Serve these tools as an MCP server, blocking (stdio by default). Every call goes
        through the same gates as an agent's call; see ``docs/mcp.md``."""
        _serving["sync"](self, transport, **options)

    async def aserve_mcp(self, transport: str = "http", **options: Any) -> None:
        """Serve these tools as an MCP server until cancelled (streamable HTTP by default, on
        127.0.0.1:8000/mcp); see ``docs/mcp.md`` for the options."""
        await _serving["async"](self, transport, **options)

    def register_callable(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        overwrite: bool = False,
        **flags: Unpack[ToolFlags],
    ) -> FunctionTool[P, R]:
        """Infer a tool from a typed function exactly like ``@tool`` and register it."""
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
        **flags: Unpack[ToolFlags],
    ) -> Tool:
        """Register ``func(parameters_dict)`` with hand-written ``ToolParameter``s (no inference)."""
        tool = function_tool(func, name, description, list(parameters or ()), **flags)
        self.register(tool, overwrite=overwrite)
        return tool
