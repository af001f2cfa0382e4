"""``TodoTool``: the run's task list (``write_todos(todos=[{content, status}, ...])``).

The model sends the whole list on every call (it replaces the previous one) and reads the whole
list back, with counts. The list belongs to the run: ``RunResult.todos`` holds it when the run
ends (a paused run keeps it and a resumed run goes on from it), and every accepted change is
reported as a :class:`~agentmaker.TodoUpdate` event (between the call's ``ToolStart`` and
``ToolEnd``), so a UI can show progress as it happens. One ``TodoTool`` can serve many runs at
once: the tool itself holds no run's list.

Called outside an agent run (``registry.execute_tool``), there is no run to keep the list in:
the tool then keeps it itself, in ``TodoTool.todos``.

Items are ``{"content": str, "status": "pending" | "in_progress" | "completed"}``: at most 100
items of at most 2,000 characters each; a list breaking those rules is refused with a message
naming the item, and the previous list stays. The texts the model reads are the core's
(``prompts=`` overrides them by key).
"""

from __future__ import annotations

import copy
from typing import Any

from agentmaker._native import Tool, ToolResponse, _TodoTexts
from agentmaker.agent.events import TodoUpdate
from agentmaker.tools.run_context import RUN_KEY

__all__ = ["TodoTool"]


class TodoTool(Tool):
    """Tool ``write_todos``: the model keeps the run's task list (see the module doc)."""

    # Awaited on the loop that drives the run, so its event reaches hooks and streams from the
    # thread they expect; ``run`` serves ``execute_tool`` outside an agent.
    is_async = True

    def __init__(self, *, name: str = "write_todos", prompts: dict[str, str] | None = None) -> None:
        texts = _TodoTexts(prompts)
        super().__init__(name, texts.description())
        self._texts = texts
        self.todos: list[dict[str, str]] = []  # the list of calls made outside an agent run

    def get_input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self._texts.input_schema()
        return schema

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        items, text = self._texts.write(parameters.get("todos"))
        if items is None:
            return ToolResponse.error(text)
        run = getattr(parameters.get(RUN_KEY), "_run", None)  # the RunContext the agent gave
        if run is None:
            self.todos = items
        else:
            run.todos = items
            if run.observe is not None:
                run.observe(TodoUpdate(run.turn, copy.deepcopy(items)))
        return ToolResponse.ok(text, data={"todos": copy.deepcopy(items)})

    async def arun(self, parameters: dict[str, Any]) -> ToolResponse:
        return self.run(parameters)

    def __repr__(self) -> str:
        return f"TodoTool(name={self.name!r})"
