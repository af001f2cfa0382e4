"""Running admitted tool calls: the part of the call pipeline only Python can host.

The Rust core (``_native.CallPipeline``) reads each call, runs the gates, decides where each call
runs and turns every outcome into the text the model reads. This module hosts what needs the
interpreter: a person's confirmation, worker threads for blocking tools, asyncio for awaited
ones, and timeouts around both.

Timeouts: an awaited tool past its timeout is cancelled. A sync tool cannot be interrupted in
Python: when it overruns, its call returns a timeout error at once and the run goes on, but the
tool's thread keeps running until the function returns (a daemon thread, so it never keeps the
process alive); its late result is dropped, and a call whose timeout passed before a worker
took it never starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable
from concurrent.futures import FIRST_COMPLETED
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import wait as wait_futures
from typing import Any

from agentmaker.agent.approval import Approval
from agentmaker.agent.events import tool_end
from agentmaker.agent.guardrails import call_arguments, guard_input, guard_output
from agentmaker.agent.messages import Message
from agentmaker.agent.run_policy import RunBudget, RunPolicy
from agentmaker.agent.run_result import RunResult, RunUsage
from agentmaker.agent.sync_driver import NEED_LOOP, loop_hidden
from agentmaker.agent.worker_threads import shared_threads
from agentmaker.errors import RunCancelled, RunLimitExceeded
from agentmaker.tools.awaited import complete
from agentmaker.tools.call_record import ToolCallRecord

__all__ = ["CancelledInTool", "ToolExecutor", "account_usage"]


class CancelledInTool(BaseException):
    """Carries a :class:`~agentmaker.RunCancelled` out of a tool call (a hook, or the policy's
    ``cancel``, stopped the run during a tool's own model call). The core turns what a tool
    raises into an error result the model reads; a cancelled run must end instead, so the
    cancellation travels as a BaseException and the executor raises it again as it was."""

    def __init__(self, cancelled: RunCancelled) -> None:
        super().__init__(cancelled)
        self.cancelled = cancelled


class _Run:
    """Working state of one run."""

    __slots__ = (
        "budget",
        "completion_tokens",
        "confirm",
        "context",
        "deltas",
        "deps",
        "depth",
        "direct",
        "gate",
        "guards",
        "llm_calls",
        "messages",
        "observe",
        "pending",
        "pipeline",
        "prompt_tokens",
        "records",
        "retries",
        "run_id",
        "start",
        "sync_entry",
        "todos",
        "tool_notes",
        "tools",
        "tools_before",
        "total_tokens",
        "turn",
    )

    def __init__(
        self, sync_entry: bool, policy: RunPolicy | None, pipeline: Any, parent: _Run | None = None
    ) -> None:
        self.direct = sync_entry  # stepped by hand, no event loop yet
        self.sync_entry = sync_entry
        self.pipeline = pipeline
        self.messages: list[Message] = []
        self.records: list[ToolCallRecord] = []
        above = parent.budget if parent is not None else None
        self.budget: RunBudget | None = (
            RunBudget(policy, above) if policy is not None or above is not None else None
        )
        # How many agent tools deep this run is (0 for a run started by the caller).
        self.depth: int = parent.depth + 1 if parent is not None else 0
        self.confirm: Any = None  # who approves calls that need it (the agent's, or its caller's)
        self.todos: list[dict[str, str]] = []  # the task list a TodoTool keeps
        self.run_id = ""  # RunContext.run_id; tools that keep state per run key it by this
        self.turn = 0
        self.llm_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.total_tokens = 0
        self.tools: list[dict[str, Any]] | None = None
        self.tool_notes: tuple[str, ...] = ()  # the offered tools' instructions in the system prompt
        # Where this run's own messages start (after the instructions and any history), the
        # calls it paused on, and tool executions of the run before it was paused and resumed.
        self.start = 0
        self.pending: list[ToolCallRecord] = []
        self.tools_before = 0
        self.retries = 0  # tool calls that raised RetryAgentRun
        # Who sees the run's events (hooks, a stream), and the model's text as events: 0 no, 1
        # the whole text of each reply, 2 the pieces of the model's own stream.
        self.observe: Any = None
        self.deltas = 0
        self.deps: Any = None  # given to tools through RunContext, made when a tool asks
        self.context: Any = None
        self.gate: Any = None  # a streamed run waits here for its consumer (see streaming.Feed)
        # The agent's and the policy's guardrails: (input, output); each tool adds its own.
        self.guards: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())

    def admit_llm(self) -> bool:
        """Whether the run's limits allow one more model call (for a tool's own model call,
        which falls back to something else rather than end the run)."""
        if self.budget is not None:
            try:
                self.budget.admit_llm()
            except RunLimitExceeded:
                return False
        return True

    def record_llm(self, usage: Any) -> None:
        """Count a tool's own model call (and its ``usage``, if any) in the run."""
        self.llm_calls += 1
        tokens = account_usage(self, usage) if usage else 0
        if self.budget is not None:
            with contextlib.suppress(RunLimitExceeded):  # the run's next model call is refused
                self.budget.record_llm(tokens)

    def usage(self) -> RunUsage:
        """The run's usage so far (what ``RunContext.usage`` and the result report)."""
        return RunUsage(
            self.llm_calls,
            self.tools_before + self.pipeline.executed,
            self.prompt_tokens,
            self.completion_tokens,
            self.total_tokens,
        )


class ToolExecutor:
    """The execution half of :class:`~agentmaker.Agent` (a mixin: it reads ``max_concurrency``
    from the agent; who confirms is the run's ``confirm``)."""

    max_concurrency: int | None

    async def _alone(self, run: _Run, rec: ToolCallRecord) -> None:
        """A call that runs by itself: confirmation, admission, then execution."""
        if rec._confirm and not await self._approved(run, rec):
            return
        if run.budget is not None:
            self._admit(run, rec)
        await self._execute(run, rec)

    @staticmethod
    def _input_checks(run: _Run, recs: list[ToolCallRecord]) -> Awaitable[None] | None:
        """Input guardrails on each admitted call (before its confirmation); None when no
        guardrail applies, so a turn without any awaits nothing for them."""
        run_guards = run.guards[0]
        checks = [
            (rec, guards)
            for rec in recs
            if rec.status is None and (guards := run_guards + tuple(rec._tool.input_guardrails))
        ]
        return _check_inputs(run, checks) if checks else None

    @staticmethod
    def _output_checks(run: _Run, recs: list[ToolCallRecord]) -> Awaitable[None] | None:
        """Output guardrails on each result held for them (the core then cuts and frames it);
        None when no result is held."""
        held = [rec for rec in recs if rec._held]
        return _check_outputs(run, held) if held else None

    @classmethod
    async def _guard_inputs(cls, run: _Run, recs: list[ToolCallRecord]) -> None:
        checking = cls._input_checks(run, recs)
        if checking is not None:
            await checking

    @classmethod
    async def _guard_outputs(cls, run: _Run, recs: list[ToolCallRecord]) -> None:
        checking = cls._output_checks(run, recs)
        if checking is not None:
            await checking

    @staticmethod
    def _tripped(run: _Run, recs: list[ToolCallRecord], start: int) -> None:
        """A guardrail ended the run in the group at ``start``: the response's calls that did
        not finish are skipped, so the partial result's transcript answers every call."""
        pipeline = run.pipeline
        for r in [*(r for r in recs[:start] if r.status == "pending"), *recs[start:]]:
            if r._held:
                pipeline.release(r)
            if r.status is None or r.status == "pending":
                pipeline.refuse(r, "skipped")
            if run.observe is not None:
                run.observe(tool_end(run.turn, r))
            run.messages.append({"role": "tool", "tool_call_id": r.call_id, "content": r.output})

    @staticmethod
    def _admit(run: _Run, rec: ToolCallRecord) -> None:
        """The run's limits admit one more execution; the deadline shortens its timeout."""
        budget = run.budget
        assert budget is not None
        budget.admit_tool()
        budget.record_tool()
        timeout = budget.cap_timeout(rec._timeout)
        if timeout != rec._timeout:
            run.pipeline.set_timeout(rec, timeout)

    async def _approved(self, run: _Run, rec: ToolCallRecord) -> bool:
        """The confirmation gate: only an answer of exactly True approves."""
        confirm = run.confirm
        pipeline = run.pipeline
        if getattr(rec._tool, "_pauses_run", False):
            # A UserInputTool(mode="pause") question: the run pauses; Agent.resume brings the
            # person's answer.
            pipeline.refuse(rec, "pending")
            return False
        if isinstance(confirm, Approval):
            verdict = pipeline.decide_unasked(rec)  # the rules and the attempts, in the core
            if verdict is not None:
                return bool(verdict)
            confirm = confirm.ask
        if confirm == "pause":  # the run pauses; Agent.resume brings the person's decision
            pipeline.refuse(rec, "pending")
            return False
        if confirm is None:
            pipeline.refuse(rec, "no_confirm")
            return False
        args = call_arguments(rec)
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
            pipeline.refuse(rec, "confirm_failed", exc)
            return False
        if answer is True:
            return True
        pipeline.refuse(rec, "not_approved")
        return False

    @staticmethod
    def _inline(run: _Run, rec: ToolCallRecord) -> None:
        """Run a call on the thread that drives the run (a sync run that had to start an event
        loop hides it, so a tool may run its own)."""
        if run.sync_entry and not run.direct:
            with loop_hidden():
                run.pipeline.run(rec)
        else:
            run.pipeline.run(rec)

    async def _execute(self, run: _Run, rec: ToolCallRecord) -> None:
        """Run an admitted call on its route, under its timeout; the core fills the record."""
        pipeline = run.pipeline
        route = rec._route
        timeout = rec._timeout
        started = time.perf_counter()
        try:
            if route == "inline":
                self._inline(run, rec)
            elif route == "thread":
                fut = shared_threads().submit(pipeline.run, rec)
                if run.direct:
                    fut.result(timeout)
                else:
                    await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
            else:
                if run.direct:
                    await NEED_LOOP
                    run.direct = False
                call = pipeline.start(rec)
                if call is not None:
                    await (complete(call) if timeout is None else asyncio.wait_for(complete(call), timeout))
                    if type(rec.data) is RunResult and rec.data.status == "paused":
                        # A sub-agent (Agent.as_tool) paused for a person: so does this run.
                        if rec._held:
                            pipeline.release(rec)
                        pipeline.refuse(rec, "pending")
                        run.tools_before -= 1  # counted once, when the resumed call completes
        except (FutureTimeout, TimeoutError):
            pipeline.time_out(rec, timeout, time.perf_counter() - started)
        except CancelledInTool as stop:
            raise stop.cancelled from None
        except Exception as exc:  # noqa: BLE001 - the last net: the core words it for the model
            pipeline.fail(rec, exc, time.perf_counter() - started)

    async def _batch(self, run: _Run, recs: list[ToolCallRecord]) -> None:
        """Run a batch of parallel-safe calls together; results land in each record."""
        if run.budget is not None:  # only deadline/cancel apply here: numeric caps force serial runs
            for r in recs:
                self._admit(run, r)
        for r in recs:
            if r._route == "inline":  # non-blocking built-ins: a thread would cost more than the call
                self._inline(run, r)
        todo = [r for r in recs if r._route != "inline"]
        bound = self.max_concurrency
        if run.direct and all(r._timeout is None and r._route == "thread" for r in todo):
            self._batch_on_threads(run, todo, bound)
            return
        if run.direct:
            await NEED_LOOP
            run.direct = False
        if bound is None or bound >= len(todo):
            await asyncio.gather(*(self._execute(run, r) for r in todo))
            return
        sem = asyncio.Semaphore(bound)

        async def bounded(r: ToolCallRecord) -> None:
            async with sem:
                await self._execute(run, r)

        await asyncio.gather(*(bounded(r) for r in todo))

    @staticmethod
    def _batch_on_threads(run: _Run, todo: list[ToolCallRecord], bound: int | None) -> None:
        """Sync tools of a batch on worker threads, without an event loop (the sync path)."""
        pipeline = run.pipeline
        threads = shared_threads()
        window = bound or len(todo)
        pending: dict[Any, tuple[ToolCallRecord, float]] = {}
        queue = list(reversed(todo))
        while queue or pending:
            while queue and len(pending) < window:
                r = queue.pop()
                pending[threads.submit(pipeline.run, r)] = (r, time.perf_counter())
            done, _ = wait_futures(list(pending), return_when=FIRST_COMPLETED)
            for fut in done:
                r, started = pending.pop(fut)
                exc = fut.exception()
                if exc is not None:
                    pipeline.fail(r, exc, time.perf_counter() - started)


def account_usage(run: _Run, usage: Any) -> int:
    """Add a model reply's ``usage`` to the run's token counts; the tokens it used."""
    get = usage.get if isinstance(usage, dict) else (lambda k, d=None: getattr(usage, k, d))
    prompt = get("prompt_tokens", 0) or 0
    completion = get("completion_tokens", 0) or 0
    total = get("total_tokens", None)
    if not isinstance(total, int):
        total = (prompt if isinstance(prompt, int) else 0) + (
            completion if isinstance(completion, int) else 0
        )
    if isinstance(prompt, int):
        run.prompt_tokens += prompt
    if isinstance(completion, int):
        run.completion_tokens += completion
    run.total_tokens += total
    return total


async def _check_inputs(run: _Run, checks: list[tuple[ToolCallRecord, tuple[Any, ...]]]) -> None:
    for rec, guards in checks:
        if rec.status is None:  # an earlier guardrail of the group may have ended it
            await guard_input(run, run.pipeline, rec, guards)


async def _check_outputs(run: _Run, held: list[ToolCallRecord]) -> None:
    for rec in held:
        await guard_output(run, run.pipeline, rec, run.guards[1] + tuple(rec._tool.output_guardrails))
