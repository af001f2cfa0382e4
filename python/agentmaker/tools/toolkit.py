"""``Toolkit``: related tools handed to an agent together, with the instructions that go with
them.

A toolkit is built from tools and plain functions (including bound methods, so a subclass can
offer its own methods with the state it holds). It can rename its tools with a ``prefix``
(``billing_`` makes ``refund`` into ``billing_refund``), keep only some with ``include`` or drop
some with ``exclude`` (both by the tools' own names, before the prefix; a name that matches no
tool is an error, so a typo is not silently ignored), and carry ``instructions``: the Agent
given the toolkit (``Agent(tools=[toolkit, ...])``) adds them to its system prompt, after its
own instructions.

A prefix renames function tools (``@tool`` functions and plain callables), which are rebuilt
under the new name with the same flags and description; another kind of tool (a ``Tool``
subclass, a built-in, an MCP tool) cannot be copied under a new name, so a prefixed toolkit
refuses it with a clear error rather than renaming an object that may be used elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

from agentmaker._native import Tool
from agentmaker.tools.decorator import _FLAGS, FunctionTool, ToolFlags, from_callable

__all__ = ["Toolkit"]


class Toolkit:
    """A named group of tools with an optional name ``prefix``, ``include``/``exclude`` filters
    and ``instructions`` for the system prompt. ``tools`` holds the resulting tools.

    Subclasses may set ``instructions`` (and ``prefix``) as class attributes and pass their own
    methods: ``super().__init__([self.lookup, self.refund])``.
    """

    instructions: str | None = None
    prefix: str = ""

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]],
        *,
        name: str | None = None,
        prefix: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        instructions: str | None = None,
    ) -> None:
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise TypeError(f"Toolkit tools must be a list of tools or functions, got {tools!r}")
        if prefix is not None:
            self.prefix = prefix
        if instructions is not None:
            self.instructions = instructions
        if not isinstance(self.prefix, str):
            raise TypeError(f"Toolkit prefix must be a string, got {self.prefix!r}")
        if self.instructions is not None and not isinstance(self.instructions, str):
            raise TypeError(f"Toolkit instructions must be a string, got {self.instructions!r}")
        self.name = name or type(self).__name__
        built = [t if isinstance(t, Tool) else _function_tool(t) for t in tools]
        own = [t.name for t in built]
        keep = _names(include, own, "include") if include is not None else set(own)
        keep -= _names(exclude, own, "exclude") if exclude is not None else set()
        self.tools: list[Tool] = [self._renamed(t) for t in built if t.name in keep]

    def _renamed(self, tool: Tool) -> Tool:
        if not self.prefix:
            return tool
        if not isinstance(tool, FunctionTool):
            raise TypeError(
                f"Toolkit {self.name!r}: prefix {self.prefix!r} can only rename function tools; "
                f"'{tool.name}' is a {type(tool).__name__}: give it its own name, or put it in a "
                "toolkit without a prefix"
            )
        # The flags this tool was built with, read back (MCP hints are set only when given): each
        # one was validated then, so they make a ToolFlags again.
        flags = cast(ToolFlags, {k: getattr(tool, k, None) for k in _FLAGS})
        return from_callable(tool.func, name=self.prefix + tool.name, description=tool.description, **flags)

    def __iter__(self) -> Any:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __repr__(self) -> str:
        return f"Toolkit(name={self.name!r}, tools={[t.name for t in self.tools]!r})"


def _function_tool(func: Any) -> Tool:
    if not callable(func):
        raise TypeError(f"Toolkit tools must be tools or functions, got {func!r}")
    return from_callable(func)


def _names(names: Iterable[str], known: list[str], what: str) -> set[str]:
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise TypeError(f"Toolkit {what} must be a list of tool names, got {names!r}")
    chosen = set(names)
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ValueError(
            f"Toolkit {what} names {', '.join(map(repr, unknown))}, which the toolkit does not have; "
            f"its tools are {', '.join(map(repr, known))}"
        )
    return chosen
