"""Registry scenarios (issue 2): execute_tool overhead, register and renderings at 1,000 tools."""

from __future__ import annotations

from agentmaker import Tool, ToolParameter, ToolRegistry, ToolResponse
from harness import once_us, per_call_us, report

GROUP = "registry"


def add(a: int, b: int) -> ToolResponse:
    return ToolResponse.ok(str(a + b))


class AddTool(Tool):
    def __init__(self, name: str = "add") -> None:
        super().__init__(name, "Add two integers.")

    def get_parameters(self):
        return [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

    def run(self, parameters):
        return add(**parameters)


def many_tools(n: int) -> list[Tool]:
    return [AddTool(f"tool_{i}") for i in range(n)]


def main() -> None:
    reg = ToolRegistry()
    reg.register(AddTool())
    params = {"a": 2, "b": 3}
    bad = {"a": "two", "b": 3}
    floor = per_call_us(lambda: add(**params))
    report(
        GROUP,
        "execute_tool, Tool subclass, valid args",
        per_call_us(lambda: reg.execute_tool("add", params)),
        floor_us=floor,
        target_us=2.0,
    )
    report(
        GROUP,
        "execute_tool, Tool subclass, invalid args",
        per_call_us(lambda: reg.execute_tool("add", bad)),
        floor_us=floor,
        target_us=10.0,
    )
    try:
        from agentmaker import tool
    except ImportError:
        tool = None
    if tool is not None:

        @tool
        def add_fn(a: int, b: int) -> str:
            """Add two integers."""
            return str(a + b)

        reg.register(add_fn)
        raw = add_fn.__wrapped__ if hasattr(add_fn, "__wrapped__") else None
        if raw is not None:
            floor_fn = per_call_us(lambda: raw(**params))
            report(
                GROUP,
                "execute_tool, @tool function, valid args",
                per_call_us(lambda: reg.execute_tool("add_fn", params)),
                floor_us=floor_fn,
                target_us=2.0,
            )
            report(
                GROUP,
                "execute_tool, @tool function, invalid args",
                per_call_us(lambda: reg.execute_tool("add_fn", bad)),
                floor_us=floor_fn,
                target_us=10.0,
            )

    tools = many_tools(1000)
    holder = {}

    def fresh():
        holder["reg"] = ToolRegistry()

    report(
        GROUP,
        "register 1,000 tools (one by one)",
        once_us(lambda: [holder["reg"].register(t) for t in tools], setup=fresh),
        target_us=5000,
    )
    report(
        GROUP,
        "register_all 1,000 tools",
        once_us(lambda: holder["reg"].register_all(tools), setup=fresh),
        target_us=5000,
    )

    big = ToolRegistry()
    big.register_all(tools)

    def change():
        # A change invalidates the cached renderings: the next call is a "first call".
        if "extra" in big:
            big.unregister("extra")
        else:
            big.register(AddTool("extra"))

    report(
        GROUP,
        "to_openai_schema(), 1,000 tools, first call after a change",
        once_us(big.to_openai_schema, setup=change),
        target_us=1000,
    )
    report(
        GROUP,
        "to_openai_schema(), 1,000 tools, repeated",
        per_call_us(big.to_openai_schema, number=200),
        target_us=300,
    )
    report(
        GROUP,
        "get_tools_description(), 1,000 tools, first call after a change",
        once_us(big.get_tools_description, setup=change),
        target_us=500,
    )
    report(
        GROUP,
        "get_tools_description(), 1,000 tools, repeated",
        per_call_us(big.get_tools_description, number=200),
        target_us=500,
    )
    subset = [f"tool_{i}" for i in range(0, 1000, 125)]
    report(
        GROUP,
        "to_openai_schema(names=8 tools)",
        per_call_us(lambda: big.to_openai_schema(subset), number=2000),
    )


if __name__ == "__main__":
    main()
