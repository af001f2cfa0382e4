"""Execution of admitted tool calls: confirmation, inline / threaded / awaited runs, timeouts,
parallel batches, and turning outcomes into the text the model reads.

Timeouts: an async tool past its timeout is cancelled. A sync tool cannot be interrupted in
Python: when it overruns, its call returns a timeout error at once and the run goes on, but the
tool's thread keeps running until the function returns (it is a daemon thread, so it never keeps
the process alive).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import time
from concurrent.futures import FIRST_COMPLETED
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait as wait_futures
from typing import Any

from . import _native
from ._messages import Message
from ._sync_driver import NEED_LOOP, loop_hidden
from ._threads import shared_threads
from ._tool_call import ToolCallRecord
from .errors import RetryAgentRun, StopAgentRun
from .run_policy import RunBudget, RunPolicy

__all__ = ["ToolExecutor"]


class _Run:
    """Working state of one run."""

    __slots__ = (
        "budget",
        "completion_tokens",
        "direct",
        "guard",
        "llm_calls",
        "messages",
        "prompt_tokens",
        "records",
        "serial",
        "sync_entry",
        "tool_calls",
        "tools",
        "total_tokens",
        "turn",
        "visible",
    )

    def __init__(self, sync_entry: bool, policy: RunPolicy | None) -> None:
        self.direct = sync_entry  # stepped by hand, no event loop yet
        self.sync_entry = sync_entry
        self.messages: list[Message] = []
        self.records: list[ToolCallRecord] = []
        self.budget = RunBudget(policy) if policy is not None else None
        self.serial = policy is not None and policy.has_numeric_cap
        self.guard: Any = None
        self.turn = 0
        self.llm_calls = 0
        self.tool_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.total_tokens = 0
        self.visible: list[str] | None = None
        self.tools: list[dict[str, Any]] | None = None


class ToolExecutor:
    """The execution half of :class:`~agentmaker.Agent` (a mixin: it reads ``tool_registry``,
    ``confirm`` and ``max_concurrency`` from the agent)."""

    tool_registry: Any
    confirm: Any
    max_concurrency: int | None

    async def _serial(self, run: _Run, rec: ToolCallRecord) -> None:
        if rec._confirm:
            refusal = await self._ask(run, rec)
            if refusal is not None:
                rec.refuse("not_confirmed", refusal)
                return
        if run.budget is not None:
            run.budget.admit_tool()
            run.budget.record_tool()
            rec._timeout = run.budget.cap_timeout(rec._timeout)
        await self._execute(run, rec, threaded=not run.sync_entry and rec._kind == "sync")

    async def _ask(self, run: _Run, rec: ToolCallRecord) -> str | None:
        """The confirmation gate: None when approved, else the refusal text for the model."""
        confirm = self.confirm
        name = rec.name
        if confirm is None:
            return (
                f"Error: tool '{name}' is a high-risk operation and needs confirmation, but no confirm "
                "callback is configured; the call was refused (give the Agent confirm=..., e.g. cli_confirm)."
            )
        args = copy.deepcopy(rec._params)
        try:
            if run.sync_entry and not run.direct and not inspect.iscoroutinefunction(confirm):
                with loop_hidden():
                    answer = confirm(rec._tool, args)
            elif run.sync_entry or inspect.iscoroutinefunction(confirm):
                answer = confirm(rec._tool, args)
            else:  # a blocking prompt must not stall the event loop
                answer = await asyncio.wrap_future(shared_threads().submit(confirm, rec._tool, args))
            if inspect.isawaitable(answer):
                if run.direct:
                    await NEED_LOOP
                    run.direct = False
                answer = await answer
        except Exception as exc:  # noqa: BLE001 - a failing approval refuses the call
            return (
                f"Error: the confirmation for tool '{name}' failed ({type(exc).__name__}: {exc}); "
                "the call was not executed."
            )
        if answer is True:
            return None
        return f"Error: tool '{name}' was not approved; the call was not executed."

    async def _execute(self, run: _Run, rec: ToolCallRecord, threaded: bool) -> None:
        """Run an admitted call and fill in its record. Flow-control exceptions are absorbed."""
        reg = self.tool_registry
        name, params, timeout = rec.name, rec._params, rec._timeout
        started = time.perf_counter()
        try:
            kind = rec._kind
            if kind == "dual":  # an MCP tool: blocking inline on the sync path, else awaited
                kind = "sync" if run.sync_entry and not threaded and timeout is None else "async"
            if kind == "inline" or (kind == "sync" and not threaded and timeout is None):
                self._run_inline(run, rec)
                return
            if kind == "sync":
                fut = shared_threads().submit(reg._execute_checked, name, params)
                if run.direct:
                    outcome = fut.result(timeout)
                else:
                    outcome = await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
            else:
                if run.direct:
                    await NEED_LOOP
                    run.direct = False
                if timeout is None:
                    outcome = await self._acall(run, rec)
                else:
                    outcome = await asyncio.wait_for(self._acall(run, rec), timeout)
        except (FutureTimeout, TimeoutError):
            self._entered(run, rec)
            rec.duration = time.perf_counter() - started
            rec.refuse(
                "timeout",
                f"Error: tool '{name}' did not finish within {timeout:g} seconds; the call was abandoned.",
            )
            return
        except Exception as exc:  # noqa: BLE001 - signals and last-resort errors
            self._entered(run, rec)
            rec.duration = time.perf_counter() - started
            self._signal(rec, exc)
            return
        rec.duration = time.perf_counter() - started
        self._absorb(run, rec, outcome)

    def _run_inline(self, run: _Run, rec: ToolCallRecord) -> None:
        """Run a sync (or non-blocking built-in) tool on the calling thread."""
        started = time.perf_counter()
        try:
            if run.direct or not run.sync_entry:
                outcome = self.tool_registry._execute_checked(rec.name, rec._params)
            else:
                with loop_hidden():
                    outcome = self.tool_registry._execute_checked(rec.name, rec._params)
        except Exception as exc:  # noqa: BLE001 - signals and last-resort errors
            rec.duration = time.perf_counter() - started
            self._entered(run, rec)
            self._signal(rec, exc)
            return
        rec.duration = time.perf_counter() - started
        self._absorb(run, rec, outcome)

    async def _acall(self, run: _Run, rec: ToolCallRecord) -> Any:
        """``aexecute_tool`` for an async tool, validating once and reporting whether it ran."""
        reg = self.tool_registry
        admitted = reg._admit(rec.name, rec._params)
        if type(admitted) is _native.ToolResponse:  # refused by validation
            return (admitted, False)
        rec.executed = True
        run.tool_calls += 1
        try:
            if type(admitted) is not tuple:  # an MCP call, already sent
                return await admitted
            tool, kind, args = admitted  # args: a pruned copy when nulls meant "use the default"
            result = await tool.arun(args)
        except Exception as exc:  # noqa: BLE001 - converted like execute_tool does; signals re-raise
            return reg._exception(rec.name, exc)
        return reg._wrap(rec.name, kind, result)

    @staticmethod
    def _entered(run: _Run, rec: ToolCallRecord) -> None:
        """Count a sync call whose outcome is an exception or a timeout (it was admitted)."""
        if not rec.executed:
            rec.executed = True
            run.tool_calls += 1

    @staticmethod
    def _signal(rec: ToolCallRecord, exc: BaseException) -> None:
        """A flow-control signal from the tool, or (last resort) an unexpected exception."""
        if isinstance(exc, StopAgentRun):
            rec.refuse("stopped", exc.message)
            rec._stop = exc.message
        elif isinstance(exc, RetryAgentRun):
            rec.refuse("retry", exc.message)
        else:  # the registry converts tool errors; this is the last net
            rec.refuse(
                "error", f"Error: tool '{rec.name}' raised during execution: {type(exc).__name__}: {exc}"
            )

    def _absorb(self, run: _Run, rec: ToolCallRecord, outcome: Any) -> None:
        if type(outcome) is tuple:  # (response, executed) from the sync entry point
            resp, executed = outcome
            if not executed:
                rec.refuse("invalid", resp.text)
                return
            if not rec.executed:
                rec.executed = True
                run.tool_calls += 1
        else:
            resp = outcome
        tool = rec._tool
        text = getattr(resp, "text", None)
        if not isinstance(text, str):
            rec.status = "error"
            text = f"Error: tool '{rec.name}' returned {type(resp).__name__} instead of a ToolResponse"
        else:
            status = resp.status
            rec.status = status if isinstance(status, str) else str(status)  # type: ignore[assignment]
            rec.data = resp.data
        try:
            external = bool(tool.is_external_content(rec._params))
        except Exception:  # noqa: BLE001 - when unsure, treat the text as untrusted
            external = True
        if external:
            guard = run.guard
            if guard is None:
                guard = run.guard = _native.Guard()
            text = guard.wrap(rec.name, text)
        rec.output = text
        if getattr(tool, "stop_after_tool_call", False):
            rec._stop = text

    async def _batch(self, run: _Run, recs: list[ToolCallRecord]) -> None:
        """Run adjacent parallel-safe calls together; results land in each record, in order."""
        todo = [r for r in recs if r.status is None]
        budget = run.budget
        if budget is not None:  # only deadline/cancel apply here: numeric caps force serial runs
            for r in todo:
                budget.admit_tool()
                budget.record_tool()
                r._timeout = budget.cap_timeout(r._timeout)
        inline = [r for r in todo if r._kind == "inline"]
        if inline:  # non-blocking built-ins: a thread would cost more than the call
            for r in inline:
                self._run_inline(run, r)
            todo = [r for r in todo if r._kind != "inline"]
        bound = self.max_concurrency
        if run.direct and all(r._timeout is None and r._kind in ("sync", "inline") for r in todo):
            self._batch_on_threads(run, todo, bound)
            return
        if run.direct:
            await NEED_LOOP
            run.direct = False
        if bound is None or bound >= len(todo):
            await asyncio.gather(*(self._execute(run, r, True) for r in todo))
            return
        sem = asyncio.Semaphore(bound)

        async def bounded(r: ToolCallRecord) -> None:
            async with sem:
                await self._execute(run, r, True)

        await asyncio.gather(*(bounded(r) for r in todo))

    def _batch_on_threads(self, run: _Run, todo: list[ToolCallRecord], bound: int | None) -> None:
        """Sync tools of a batch on worker threads, without an event loop (the sync path)."""
        reg = self.tool_registry
        threads = shared_threads()
        window = bound or len(todo)
        pending: dict[Any, ToolCallRecord] = {}
        started: dict[int, float] = {}
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < window:
                r = queue.pop()
                started[id(r)] = time.perf_counter()
                pending[threads.submit(reg._execute_checked, r.name, r._params)] = r
            done, _ = wait_futures(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                r = pending.pop(fut)
                r.duration = time.perf_counter() - started[id(r)]
                try:
                    outcome = fut.result()
                except Exception as exc:  # noqa: BLE001 - signals and last-resort errors
                    self._entered(run, r)
                    self._signal(r, exc)
                else:
                    self._absorb(run, r, outcome)
