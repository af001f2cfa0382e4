"""A tool's own model calls inside a run (``ToolSearchTool(strategy="model")``).

With each call of such a tool the agent hands it a :class:`ToolModelCalls` (under the
``RUN_KEY`` parameter: the model never sees it and the call's record does not show it), and
the tool's model calls go through it the way the agent makes its own:

- the method: the one :func:`agentmaker.llm.dispatch.chat_method` picks for the run's entry
  point (``chat`` for ``Agent.run``, ``achat`` for ``Agent.arun`` and ``astream`` when the
  model has both), so a sync-only and an async-only model work under every entry point. An
  ``async`` method is awaited on the run's event loop; a blocking one runs on a worker thread,
  so neither the loop nor the run's deadline waits on it;
- the limits: each call is admitted by the run's ``RunPolicy`` first (when the run has no
  model call left the tool falls back, and the run goes on) and counted in the run's usage
  after (``llm_calls`` and tokens, also when it failed: the request was sent). The run's
  deadline cuts a call short: the tool falls back, and the run ends at its deadline as it
  would have without the tool;
- the events: :class:`~agentmaker.LLMStart` and :class:`~agentmaker.LLMEnd` reach the run's
  hooks, stream and OpenTelemetry spans, with the tool call's ``call_id`` and the tool's
  ``llm`` (the agent's own calls have ``call_id=None``); a call that fails ends with an
  ``LLMEnd`` whose ``response`` is None and ``error`` the exception. No
  :class:`~agentmaker.TextDelta` is made of a tool's model calls: their text is the tool's
  business, not the answer. A streamed run waits for its reader before each such call, as before
  its own, so a reader that left stops the run before the tool pays for a model call;
- cancellation: the policy's ``cancel`` is asked before each call, and a hook may raise
  :class:`~agentmaker.RunCancelled` on these events: either ends the run right away, as it
  does around the agent's own model calls (not as an error the model reads).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, cast

from agentmaker.agent.events import LLMEnd, LLMStart
from agentmaker.agent.messages import Message
from agentmaker.agent.run_policy import before_deadline
from agentmaker.agent.tool_calls import CancelledInTool, _Run
from agentmaker.agent.worker_threads import shared_threads
from agentmaker.errors import RunCancelled
from agentmaker.llm.dispatch import chat_method
from agentmaker.rag.tool_search import ToolSearchTool
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.run_context import RUN_KEY

__all__ = ["ToolModelCalls", "hand_model_calls"]


class ToolModelCalls:
    """One tool call's access to its run, for the model calls the tool makes itself.

    ``allowed(name) -> bool`` is the agent's permission check (None without permissions): a
    tool that lists tools shows the model only those the agent may call."""

    __slots__ = ("allowed", "call_id", "run")

    def __init__(self, run: _Run, call_id: str, allowed: Callable[[str], bool] | None) -> None:
        self.run = run
        self.call_id = call_id
        self.allowed = allowed

    def __repr__(self) -> str:
        return f"ToolModelCalls(call_id={self.call_id!r})"

    def __copy__(self) -> ToolModelCalls:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ToolModelCalls:
        return self

    async def achat(self, llm: Any, messages: list[dict[str, Any]]) -> Any:
        """The model's reply to ``messages``, or None when the run's limits leave no model call
        or the call failed (the tool then does without the model). A cancellation (the
        policy's ``cancel``, or a hook raising :class:`~agentmaker.RunCancelled`) ends the run."""
        run = self.run
        try:
            if not run.admit_llm():
                return None
        except RunCancelled as exc:
            raise CancelledInTool(exc) from None
        if run.gate is not None:  # a stream's reader is caught up first, as before the agent's calls
            await run.gate()
        method = chat_method(llm, run.sync_entry)
        self._report(LLMStart(run.turn, cast("list[Message]", messages), 0, self.call_id, llm))
        began = time.perf_counter()
        reply: Any = None
        error: BaseException | None = None
        try:
            if inspect.iscoroutinefunction(method):
                reply = await before_deadline(method(messages), run.budget)
            else:
                wait = asyncio.wrap_future(shared_threads().submit(method, messages))
                reply = await before_deadline(wait, run.budget)
                if inspect.isawaitable(reply):  # a plain function handing back a coroutine
                    reply = await before_deadline(reply, run.budget)
        except Exception as exc:  # noqa: BLE001 - a failing model call: the tool does without it
            error = exc
        except BaseException as exc:  # cancelled: reported and counted, then on its way
            error = exc
            raise
        finally:
            run.record_llm(getattr(reply, "usage", None))
            self._report(LLMEnd(run.turn, reply, time.perf_counter() - began, self.call_id, error))
        return reply

    def _report(self, event: LLMStart | LLMEnd) -> None:
        observe = self.run.observe
        if observe is not None:
            try:
                observe(event)
            except RunCancelled as exc:  # a hook stops the run
                raise CancelledInTool(exc) from None


def hand_model_calls(run: _Run, rec: ToolCallRecord, allowed: Callable[[str], bool] | None) -> None:
    """Give an admitted call of a tool that calls a model of its own (a model-strategy
    ``ToolSearchTool``) its :class:`ToolModelCalls`; the record keeps the model's arguments."""
    tool = rec._tool
    if rec.status is not None or not isinstance(tool, ToolSearchTool) or tool.llm is None:
        return
    params = rec._params
    assert params is not None
    if rec.arguments is params:
        rec.arguments = dict(params)
    params[RUN_KEY] = ToolModelCalls(run, rec.call_id, allowed)
