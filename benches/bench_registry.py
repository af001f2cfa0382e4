"""Registry scenarios (issue 2): execute_tool and aexecute_tool overhead, register and renderings
at 1,000 tools."""

from __future__ import annotations

from agentmaker import Tool, ToolParameter, ToolRegistry, ToolResponse, tool
from harness import async_per_call_us, once_us, per_call_us, report

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


def calls(reg: ToolRegistry, label: str, name: str, floor: float, params: dict, bad: dict) -> None:
    """execute_tool with valid and with invalid arguments, against calling the function itself."""
    for which, args, target in (("valid", params, 2.0), ("invalid", bad, 10.0)):
        report(
            GROUP,
            f"execute_tool, {label}, {which} args",
            per_call_us(lambda args=args: reg.execute_tool(name, args)),
            floor_us=floor,
            target_us=target,
        )


def main() -> None:
    reg = ToolRegistry()
    reg.register(AddTool())
    params = {"a": 2, "b": 3}
    bad = {"a": "two", "b": 3}
    calls(reg, "Tool subclass", "add", per_call_us(lambda: add(**params)), params, bad)

    @tool
    def add_fn(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    reg.register(add_fn)
    calls(reg, "@tool function", "add_fn", per_call_us(lambda: add_fn.__wrapped__(**params)), params, bad)

    async def add_async(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    reg.register(tool(add_async))
    report(
        GROUP,
        "aexecute_async_tool_us: await aexecute_tool, async @tool",
        async_per_call_us(lambda: reg.aexecute_tool("add_async", params)),
        floor_us=async_per_call_us(lambda: add_async(**params)),
        note="floor = await the function itself, in the same loop",
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

    for label, render, first_target, repeat_target in (
        ("to_openai_schema()", big.to_openai_schema, 1000, 300),
        ("get_tools_description()", big.get_tools_description, 500, 500),
    ):
        report(
            GROUP,
            f"{label}, 1,000 tools, first call after a change",
            once_us(render, setup=change),
            target_us=first_target,
        )
        report(
            GROUP, f"{label}, 1,000 tools, repeated", per_call_us(render, number=200), target_us=repeat_target
        )
    subset = [f"tool_{i}" for i in range(0, 1000, 125)]
    report(
        GROUP,
        "to_openai_schema(names=8 tools)",
        per_call_us(lambda: big.to_openai_schema(subset), number=2000),
    )


if __name__ == "__main__":
    main()
