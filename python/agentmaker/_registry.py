"""The Python face of the Rust tool registry: async execution and callable registration."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from agentmaker._native import Tool, ToolResponse
from agentmaker._native import ToolRegistry as _NativeRegistry

if TYPE_CHECKING:
    from typing import Unpack

    from agentmaker._callable import FunctionTool, ToolFlags

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["ToolRegistry"]


class ToolRegistry(_NativeRegistry):
    """Holds the tools an agent may call, keyed by name, in registration order.

    Registration checks the name rule ``^[a-zA-Z0-9_-]{1,64}$``, builds the tool's JSON Schema
    and compiles its validator once; every rendering and every call reuses them.
    """

    def to_openai_schema(
        self, names: Iterable[str] | None = None, strict: bool = False
    ) -> list[dict[str, Any]]:
        """The ``tools`` argument for OpenAI-style function calling.

        ``names`` renders only those tools, in that order. ``strict=True`` renders each tool in
        OpenAI's strict form where its schema allows it (see :meth:`strict_fallbacks` for the
        tools that could not be, and why). The returned dicts are cached and shared between
        calls: copy one before mutating it.
        """
        if not strict:
            return self._openai_tools(names)
        return self._provider_forms().render(self._openai_tools(names), "strict", names is None)

    def to_anthropic_schema(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Anthropic's ``tools`` list: ``{"name", "description", "input_schema"}`` per tool."""
        return self._provider_forms().render(self._openai_tools(names), "anthropic", names is None)

    def to_gemini_schema(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Gemini function declarations (``{"name", "description", "parameters"}``), with each
        schema reduced to the subset Gemini accepts ($refs inlined, nullable instead of null)."""
        return self._provider_forms().render(self._openai_tools(names), "gemini", names is None)

    def strict_fallbacks(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Tools that ``to_openai_schema(strict=True)`` renders without ``strict``, with the reason."""
        return self._provider_forms().strict_reasons(self._openai_tools(names))

    def _provider_forms(self) -> Any:
        forms = self.__dict__.get("_forms_cache")
        if forms is None:
            from agentmaker._render import ProviderForms

            forms = self.__dict__["_forms_cache"] = ProviderForms()
        return forms

    async def aexecute_tool(self, name: str, parameters: dict[str, Any]) -> ToolResponse:
        """Async :meth:`execute_tool`: async tools (and MCP calls) are awaited on the running
        loop; synchronous ones run on a worker thread so the loop is never blocked.

        A coroutine like any other: nothing happens until it runs, and cancelling the task that
        runs it cancels the tool's ``arun`` (an MCP call is cancelled at the server too)."""
        admitted = self._admit(name, parameters)
        if type(admitted) is ToolResponse:
            return admitted
        try:
            if type(admitted) is not tuple:  # an MCP call, already sent
                return await admitted  # type: ignore[no-any-return]
            tool, kind, args = admitted  # args: a pruned copy when nulls meant "use the default"
            result = await tool.arun(args)
        except Exception as exc:  # noqa: BLE001 - the model gets the error; flow control re-raises
            return self._exception(name, exc)
        return self._wrap(name, kind, result)

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
        **flags: Unpack[ToolFlags],
    ) -> Tool:
        """Register ``func(parameters_dict)`` with hand-written ``ToolParameter``s (no inference)."""
        from agentmaker._callable import function_tool

        tool = function_tool(func, name, description, list(parameters or ()), **flags)
        self.register(tool, overwrite=overwrite)
        return tool
