"""A tool the Agent tests share, and a run by each entry point."""

from __future__ import annotations

import asyncio

from agentmaker import Agent, RunEnd, RunResult, Tool, ToolEnd, ToolParameter, ToolResponse

ENTRY_POINTS = ["run", "arun", "stream"]


def run_by(agent: Agent, how: str, prompt: str = "go") -> RunResult:
    """Run ``agent`` by ``run``, ``arun`` or ``stream`` (whose tool events must agree with the
    result's records)."""
    if how == "run":
        return agent.run(prompt)
    if how == "arun":
        return asyncio.run(agent.arun(prompt))
    events = list(agent.stream(prompt))
    assert isinstance(events[-1], RunEnd)
    result = events[-1].result
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [(e.call_id, e.status) for e in ends] == [(r.call_id, r.status) for r in result.tool_calls]
    return result


class Add(Tool):
    def __init__(self) -> None:
        super().__init__("add", "Add two integers.")
        self.seen: list[dict] = []

    def get_parameters(self):
        return [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

    def run(self, parameters):
        self.seen.append(parameters)
        return ToolResponse.ok(str(parameters["a"] + parameters["b"]), data=parameters["a"] + parameters["b"])
