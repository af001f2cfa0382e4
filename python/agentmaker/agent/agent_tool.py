"""An agent offered as a tool: ``Agent.as_tool(name=..., description=...)``.

The calling agent's model writes a task (``input``); the sub-agent runs it to an answer with its
own tools, instructions and policy, and its final answer is the call's result. Inside an agent
run the sub-agent's run is part of the calling run:

- **Deadline and cancellation.** The caller's ``RunPolicy`` limits hold inside it: its deadline
  and ``cancel`` stop the sub-agent's model and tool calls, its caps on model calls, tool calls
  and tokens count the sub-agent's calls too (the limits of the sub-agent's own policy apply as
  well). Cancelling the calling task cancels the sub-agent's run, and a ``tool_timeout`` on the
  caller bounds it like any awaited tool.
- **Usage.** The sub-agent's model calls, tool calls and tokens are added to the caller's
  ``RunUsage`` when it ends (also when it fails).
- **Transcript.** The call's ``ToolCallRecord.data`` is the sub-agent's :class:`RunResult`
  (messages, tool calls, usage, status), kept through ``RunResult.to_json``.
- **Confirmation.** A sub-agent built without ``confirm`` uses the caller's: its high-risk calls
  go to the caller's callback or :class:`~agentmaker.Approval`, and with the caller's
  ``confirm="pause"`` they pause the calling run: its ``result.pending`` lists the sub-agent's
  calls, and ``resume`` decides them and finishes the sub-agent's run first. A sub-agent with a
  ``confirm`` of its own keeps it.
- **Depth.** A top-level run is depth 0; each agent tool called inside goes one deeper, and a call
  past the tool's ``max_depth`` (default 3) is refused before the sub-agent starts, so an agent
  given itself as a tool cannot recurse without end.
- ``deps`` of the calling run reach the sub-agent's tools too.

A run of the sub-agent that ends with an error (its own limits, a failing model) is an error
result for the caller's model, with the partial transcript in ``data``; when the error is a limit
or the ``cancel`` of the calling run, the calling run's next step ends it with that error. Called outside an agent run
(``registry.execute_tool``), the sub-agent simply runs, at depth 1. The texts the model reads
are the core's (``prompts=`` overrides them by key).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from agentmaker._native import Tool, ToolResponse, _AgentToolTexts
from agentmaker.agent.run_result import RunResult, RunUsage
from agentmaker.errors import RunCancelled, RunLimitExceeded, ToolConfigError
from agentmaker.tools.run_context import RESUME_KEY, RUN_KEY

if TYPE_CHECKING:
    from agentmaker.agent.tool_calls import _Run

__all__ = ["AgentTool"]


class AgentTool(Tool):
    """An :class:`~agentmaker.Agent` as a tool (made by ``Agent.as_tool``; see the module doc)."""

    # Awaited on the caller's event loop, so cancelling the caller cancels the sub-agent.
    is_async = True

    def __init__(
        self,
        agent: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        max_depth: int | None = None,
        prompts: dict[str, str] | None = None,
    ) -> None:
        texts = _AgentToolTexts(prompts)
        if max_depth is None:
            max_depth = texts.default_max_depth
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
            raise ToolConfigError(f"as_tool max_depth must be an integer >= 1, got {max_depth!r}")
        if name is not None and not isinstance(name, str):
            raise ToolConfigError(f"as_tool name must be a string, got {name!r}")
        if description is not None and (not isinstance(description, str) or not description.strip()):
            raise ToolConfigError(f"as_tool description must be a non-empty string, got {description!r}")
        super().__init__(agent.name if name is None else name, description or texts.description(agent.name))
        self.agent = agent
        self.max_depth = max_depth
        self._texts = texts

    def get_input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self._texts.input_schema()
        return schema

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        """Outside an agent run: the sub-agent runs by itself (``execute_tool``)."""
        try:
            result = self.agent.run(str(parameters["input"]))
        except (RunCancelled, RunLimitExceeded) as exc:
            return self._failed(exc)
        return self._answer(result)

    async def arun(self, parameters: dict[str, Any]) -> ToolResponse:
        ctx = parameters.get(RUN_KEY)
        parent: _Run | None = getattr(ctx, "_run", None)
        if parent is None:
            try:
                result = await self.agent.arun(str(parameters["input"]))
            except (RunCancelled, RunLimitExceeded) as exc:
                return self._failed(exc)
            return self._answer(result)
        if parent.depth >= self.max_depth:
            return ToolResponse.error(self._texts.too_deep(self.agent.name, parent.depth, self.max_depth))
        paused = parameters.get(RESUME_KEY)
        run_id = paused.result._run_id if paused is not None else None
        run = self.agent._new_run(False, deps=parent.deps, parent=parent, run_id=run_id)
        try:
            if paused is not None:
                result = await self.agent._resumed(paused.result, paused.chosen, run)
            else:
                result = await self.agent._drive(str(parameters["input"]), run, None)
        except asyncio.CancelledError:
            _add_usage(parent, run.usage(), paused.result.usage if paused is not None else None)
            raise
        except Exception as exc:  # noqa: BLE001 - the sub-agent's failure is the call's error
            # Also a limit or a cancel of the caller's: its next admission ends the calling run.
            _add_usage(parent, run.usage(), paused.result.usage if paused is not None else None)
            self.agent._failed(run, exc)  # the partial result, also of a resumed run
            return self._failed(exc)
        _add_usage(parent, result.usage, paused.result.usage if paused is not None else None)
        return self._answer(result)

    def _answer(self, result: RunResult) -> ToolResponse:
        if result.status == "paused":
            # Inside an agent run the calling run pauses on it (agent/tool_calls.py); outside
            # one, the caller resumes the sub-agent's run from ``data``.
            text = self._texts.paused(self.agent.name, len(result.pending))
            return ToolResponse.error(text, data=result)
        if result.status == "max_turns":
            return ToolResponse.partial(result.final_output, data=result)
        return ToolResponse.ok(result.final_output, data=result)

    def _failed(self, exc: BaseException) -> ToolResponse:
        partial = getattr(exc, "result", None)
        text = self._texts.failed(self.agent.name, f"{type(exc).__name__}: {exc}")
        return ToolResponse.error(text, data=partial if isinstance(partial, RunResult) else None)

    def __repr__(self) -> str:
        return f"AgentTool(name={self.name!r}, agent={self.agent!r}, max_depth={self.max_depth})"


def _add_usage(parent: _Run, usage: RunUsage, before: RunUsage | None) -> None:
    """The sub-agent's usage, added to the calling run's; a resumed sub-agent run adds only what
    it used since it paused (``before``), which the calling run counted when it paused."""
    base = before or RunUsage()
    parent.llm_calls += usage.llm_calls - base.llm_calls
    parent.tools_before += usage.tool_calls - base.tool_calls
    parent.prompt_tokens += usage.prompt_tokens - base.prompt_tokens
    parent.completion_tokens += usage.completion_tokens - base.completion_tokens
    parent.total_tokens += usage.total_tokens - base.total_tokens
