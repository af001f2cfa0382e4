"""Agent loop scenarios (issue 5): long scripted runs, short runs on a fresh Agent, a wide async batch."""

from __future__ import annotations

import asyncio
import time

from agentmaker import Agent, Tool, ToolParameter, ToolRegistry, ToolResponse
from agentmaker.testing import ScriptedLLM
from harness import once_us, per_call_us, report

GROUP = "agent"


class AddTool(Tool):
    def __init__(self) -> None:
        super().__init__("add", "Add two integers.")

    def get_parameters(self):
        return [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

    def run(self, parameters):
        return ToolResponse.ok(str(parameters["a"] + parameters["b"]))


class SleepTool(Tool):
    supports_parallel = True

    def __init__(self) -> None:
        super().__init__("sleep", "Sleep for a while.")

    def get_parameters(self):
        return [ToolParameter("seconds", "number", "How long.")]

    async def arun(self, parameters):
        await asyncio.sleep(parameters["seconds"])
        return ToolResponse.ok("slept")


def long_run(turns: int) -> None:
    reg = ToolRegistry()
    reg.register(AddTool())
    call = ScriptedLLM.tool_call("add", {"a": 1, "b": 2})
    script = [call] * turns + ["done"]
    samples = []
    for _ in range(5):
        agent = Agent("bench", ScriptedLLM(script), tool_registry=reg, max_turns=turns + 1)
        start = time.perf_counter_ns()
        result = agent.run("go")
        samples.append((time.perf_counter_ns() - start) / 1000 / turns)
        assert result.usage.tool_calls == turns
    report(GROUP, f"{turns:,} sequential single-call turns, per turn", min(samples), target_us=20.0)


def short_runs() -> None:
    reg = ToolRegistry()
    reg.register(AddTool())
    script = [ScriptedLLM.tool_call("add", {"a": 1, "b": 2}), "The answer is 3."]

    def fresh_run():
        return Agent("bench", ScriptedLLM(script), tool_registry=reg).run("1 + 2?")

    report(
        GROUP,
        "short run (1 tool call + answer), fresh Agent, run()",
        per_call_us(fresh_run, number=2000),
        target_us=40.0,
    )
    loop = asyncio.new_event_loop()
    try:

        async def many():
            for _ in range(2000):
                await Agent("bench", ScriptedLLM(script), tool_registry=reg).arun("1 + 2?")

        loop.run_until_complete(many())  # warm-up
        start = time.perf_counter_ns()
        loop.run_until_complete(many())
        report(
            GROUP,
            "short run, fresh Agent, await arun() (sync tool on a thread)",
            (time.perf_counter_ns() - start) / 1000 / 2000,
        )
    finally:
        loop.close()


def wide_async_batch(n: int = 200, seconds: float = 0.01) -> None:
    reg = ToolRegistry()
    reg.register(SleepTool())
    calls = ScriptedLLM.tool_calls(*[("sleep", {"seconds": seconds}, f"c{i}") for i in range(n)])

    async def plain_gather():
        await asyncio.gather(*(asyncio.sleep(seconds) for _ in range(n)))

    loop = asyncio.new_event_loop()
    floor = once_us(lambda: loop.run_until_complete(plain_gather()), repeat=25)

    def agent_run():
        result = Agent("bench", ScriptedLLM([calls, "ok"]), tool_registry=reg).run("go")
        assert result.usage.tool_calls == n

    report(
        GROUP,
        f"{n} async tools sleeping {seconds * 1000:g} ms in one turn, run() wall",
        once_us(agent_run, repeat=25),
        target_us=14_000.0,
        note=f"(plain asyncio.gather of the sleeps: {floor / 1000:.2f} ms)",
    )

    async def agent_arun():
        await Agent("bench", ScriptedLLM([calls, "ok"]), tool_registry=reg).arun("go")

    report(
        GROUP,
        f"{n} async tools sleeping {seconds * 1000:g} ms in one turn, arun() wall",
        once_us(lambda: loop.run_until_complete(agent_arun()), repeat=25),
        target_us=14_000.0,
    )
    loop.close()


def main() -> None:
    long_run(1000)
    short_runs()
    wide_async_batch()


if __name__ == "__main__":
    main()
