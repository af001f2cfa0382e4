"""Resuming a paused run: the person's decisions applied to the calls it paused on.

The decisions are checked first (:mod:`agentmaker.agent.pause`); then the paused calls are prepared
again through a new pipeline (every gate runs again), each digest is compared with the one the
paused result showed, approved calls run with their confirmation taken as given, refused ones
get the refusal text, and the loop goes on from the next turn. A guardrail that trips on a
resumed call ends the run as in any turn: the calls after it are skipped, so the partial
result's transcript answers every call the model made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentmaker.agent.agent_tool import AgentTool
from agentmaker.agent.events import RunStart, ToolStart, tool_end
from agentmaker.agent.hand_over import hand_kind, hand_over
from agentmaker.agent.pause import (
    Answered,
    Decision,
    Item,
    SubResume,
    changed_call,
    checked_decisions,
    resume_items,
    wire_call,
)
from agentmaker.agent.run_result import PendingCall, RunResult
from agentmaker.agent.tool_calls import _Run
from agentmaker.errors import GuardrailTripped
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.run_context import RESUME_KEY
from agentmaker.tools.status import RunStatus

__all__ = ["Resuming"]


class Resuming:
    """The resuming half of :class:`~agentmaker.Agent` (a mixin over the agent's loop)."""

    name: str
    permissions: Any

    if TYPE_CHECKING:  # what the mixin uses of the agent (and of its other mixins)

        async def _alone(self, run: _Run, rec: ToolCallRecord) -> None: ...
        @staticmethod
        def _tripped(run: _Run, recs: list[ToolCallRecord], start: int) -> None: ...
        async def _guard_inputs(self, run: _Run, recs: list[ToolCallRecord]) -> None: ...
        async def _guard_outputs(self, run: _Run, recs: list[ToolCallRecord]) -> None: ...
        def _failed(self, run: _Run, exc: BaseException) -> None: ...
        async def _loop(self, run: _Run, first_turn: int) -> RunResult: ...
        async def _offer_tools(self, run: _Run) -> None: ...
        def _permitted(self, name: str) -> bool: ...
        def _result(self, run: _Run, text: str, status: RunStatus, output: Any = None) -> RunResult: ...

    async def _resume(
        self, result: RunResult, decisions: Any, digests: Any, run: _Run, answers: Any = None
    ) -> RunResult:
        chosen = checked_decisions(result, decisions, digests, answers)
        try:
            return await self._resumed(result, chosen, run)
        except BaseException as exc:
            self._failed(run, exc)
            raise

    def _checked_calls(
        self, run: _Run, result: RunResult, chosen: list[Decision | Answered]
    ) -> tuple[list[ToolCallRecord], list[Item]]:
        """The paused calls, prepared again through the run's pipeline and each checked against
        the digest the paused result showed; a paused sub-agent's calls are checked through its
        own agent, so nothing runs when any call of the tree changed."""
        items = resume_items(result, chosen)
        pipeline = run.pipeline
        recs, _ = pipeline.prepare([wire_call(item) for item, _ in items], result._turn)
        for rec, (item, choice) in zip(recs, items, strict=True):
            if rec.status is not None:
                continue  # a gate refuses it now; nothing of it runs
            if isinstance(item, PendingCall) and pipeline.digest(rec) != item.digest:
                raise changed_call(rec, item)
            if isinstance(choice, SubResume) and isinstance(rec._tool, AgentTool):
                agent = rec._tool.agent
                agent._checked_calls(agent._new_run(False), choice.result, choice.chosen)
        return recs, items

    async def _resumed(self, result: RunResult, chosen: list[Decision | Answered], run: _Run) -> RunResult:
        run.messages = messages = list(result.messages)
        usage = result.usage
        run.llm_calls = usage.llm_calls
        run.prompt_tokens = usage.prompt_tokens
        run.completion_tokens = usage.completion_tokens
        run.total_tokens = usage.total_tokens
        run.tools_before = usage.tool_calls
        run.start = result._start
        run.turn = result._turn
        run.records = list(result.tool_calls)
        run.todos = list(result.todos)
        observe = run.observe
        if observe is not None:
            observe(RunStart(self.name, []))
        await self._offer_tools(run)
        pipeline = run.pipeline
        recs, items = self._checked_calls(run, result, chosen)
        paused = {r.call_id: r for r in run.records if r.status == "pending"}
        for rec in recs:
            if rec.call_id in paused:  # prepared again from the repaired arguments: keep what was repaired
                rec.repairs = list(paused[rec.call_id].repairs)
        stop: str | None = None
        for i, (rec, (_, choice)) in enumerate(zip(recs, items, strict=True)):
            if rec.status is None and (kind := hand_kind(rec._tool)):
                hand_over(
                    run, rec, kind, self.name, self._permitted if self.permissions is not None else None
                )
            if observe is not None:
                observe(ToolStart(run.turn, rec.call_id, rec.name, rec.arguments))
            if rec.status is not None:  # a gate refuses it now (e.g. the tool is gone)
                pass
            elif stop is not None:
                pipeline.refuse(rec, "skipped")
            elif isinstance(choice, Answered):  # the person's answer is the call's result
                pipeline.refuse(rec, "answered", reason=rec._tool._texts.answer(choice.text))
            elif choice is True or isinstance(choice, SubResume):
                if isinstance(choice, SubResume):  # the agent tool resumes its paused run
                    assert rec._params is not None
                    rec._params[RESUME_KEY] = choice
                rec._confirm = False  # the person's decision is the confirmation
                try:
                    await self._guard_inputs(run, [rec])  # every gate runs again
                    if rec.status is None:
                        await self._alone(run, rec)
                    await self._guard_outputs(run, [rec])
                except GuardrailTripped:
                    self._tripped_on_resume(run, recs, i)
                    raise
            elif choice is False:
                pipeline.refuse(rec, "not_approved")
            else:
                pipeline.refuse(rec, "declined", reason=choice.strip())
            if observe is not None:
                observe(tool_end(run.turn, rec))
            if rec.status == "pending":
                continue  # a sub-agent paused again: answered when the run resumes again
            messages.append({"role": "tool", "tool_call_id": rec.call_id, "content": rec.output})
            if stop is None and rec._stop is not None:
                stop = rec._stop
        self._take_resumed(run, recs)
        if stop is not None:
            for rec in recs:
                if rec.status == "pending":  # a sub-agent that paused again: the run is over
                    pipeline.refuse(rec, "skipped")
                    messages.append({"role": "tool", "tool_call_id": rec.call_id, "content": rec.output})
            return self._result(run, stop, "stopped")
        run.pending = [r for r in recs if r.status == "pending"]
        if run.pending:
            return self._result(run, "", "paused")
        return await self._loop(run, run.turn + 1)

    def _tripped_on_resume(self, run: _Run, recs: list[ToolCallRecord], at: int) -> None:
        """A guardrail ended the resumed run at ``recs[at]``: the calls after it are reported
        (started, then skipped) and answered as in a turn that trips, so the partial result's
        transcript answers every call; its records are the resumed ones."""
        observe = run.observe
        if observe is not None:
            for r in recs[at + 1 :]:
                observe(ToolStart(run.turn, r.call_id, r.name, r.arguments))
        self._tripped(run, recs, at)
        self._take_resumed(run, recs)

    @staticmethod
    def _take_resumed(run: _Run, recs: list[ToolCallRecord]) -> None:
        """The run's records with each paused call replaced by its resumed record."""
        resumed = {r.call_id: r for r in recs}
        run.records = [resumed.pop(r.call_id, r) if r.status == "pending" else r for r in run.records]
