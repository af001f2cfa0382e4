"""A tool the Agent tests share."""

from __future__ import annotations

from agentmaker import Tool, ToolParameter, ToolResponse


class Add(Tool):
    def __init__(self) -> None:
        super().__init__("add", "Add two integers.")
        self.seen: list[dict] = []

    def get_parameters(self):
        return [ToolParameter("a", "integer", "First."), ToolParameter("b", "integer", "Second.")]

    def run(self, parameters):
        self.seen.append(parameters)
        return ToolResponse.ok(str(parameters["a"] + parameters["b"]), data=parameters["a"] + parameters["b"])
