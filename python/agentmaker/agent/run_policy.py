"""Run limits: RunPolicy and the per-run budget that enforces it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
from agentmaker.errors import RunCancelled, RunLimitExceeded
from agentmaker.isolation.settings import Isolation, setting
from agentmaker.tools.decorator import RepairSetting, check_repair
from agentmaker.tools.guardrail_setting import check_guardrails

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "RunBudget",
    "RunPolicy",
    "before_deadline",
    "pipeline_settings",
    "retries_exceeded",
]

DEFAULT_MAX_RETRIES = 3

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunPolicy:
    """Limits for one run of an agent.

    - ``max_llm_calls`` (>= 1): model calls per run.
    - ``max_tool_calls`` (>= 0): tool executions per run; exact: the call past the cap never
      starts (0 means no tool may run). Calls refused before execution (denied, unknown,
      invalid, unconfirmed) do not count.
    - ``max_tokens`` (>= 1): sum of ``usage["total_tokens"]`` over the run's model calls.
    - ``deadline_seconds`` (> 0): wall-clock budget from the start of the run.
    - ``cancel``: a callable checked before each model call and each tool execution; returning
      True ends the run with :class:`RunCancelled`.
    - ``isolate``: True or an :class:`~agentmaker.Isolation`: Python tools that do not say
      otherwise (their ``isolate`` is None) run in a worker process, so a timeout stops them
      (see :mod:`agentmaker.isolation`).
    - ``repair`` (``"full"``, the default; ``"coerce"``; ``"off"``): what is repaired in the
      arguments a model sends. ``"full"`` reads almost-JSON text (trailing commas, single
      quotes, code fences ...) and coerces values to the tool's schema where exactly one
      reading fits (``"5"`` for an integer, ``"RED"`` for the enum value ``"red"``);
      ``"coerce"`` only coerces; ``"off"`` takes arguments as sent. A tool's own
      ``repair`` setting wins (see the guide's "Repairing arguments").
    - ``max_result_chars`` (>= 1): the most characters of one tool result the model reads; a
      longer result is cut after its last whole line that fits (inside a line when one line is
      too long), a successful one becomes ``partial``, and the model is told how much was left
      out and, for a tool that pages (it takes ``offset``, ``page`` or ``cursor``), how to ask
      for the rest. A tool's own ``max_result_chars`` wins over this one.
    - ``input_guardrails``, ``output_guardrails``: callables checking each call before it runs
      and each result before the model reads it (see :mod:`agentmaker.agent.guardrails`); they
      run after the agent's and before the tool's own.
    - ``max_retries`` (>= 0, default 3): how many times the tools of one run may raise
      ``RetryAgentRun``; the one past it ends the run with :class:`RunLimitExceeded` (kind
      ``"retries"``). It applies to agents without a policy too.

    Crossing a limit raises :class:`RunLimitExceeded`. Any numeric cap makes tool calls run one
    at a time, so each admission is exact; ``deadline_seconds`` and ``cancel`` keep parallel
    batches.
    """

    max_llm_calls: int | None = None
    max_tool_calls: int | None = None
    max_tokens: int | None = None
    deadline_seconds: float | None = None
    cancel: Callable[[], bool] | None = None
    isolate: bool | Isolation | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    repair: RepairSetting = "full"
    max_result_chars: int | None = None
    input_guardrails: Any = None
    output_guardrails: Any = None

    def __post_init__(self) -> None:
        setting(self.isolate, "RunPolicy")
        check_repair(self.repair, "RunPolicy")
        # Range and type rules (bool is not a count) live in the core.
        _native.check_run_limits(
            self.max_llm_calls, self.max_tool_calls, self.max_tokens, self.deadline_seconds
        )
        if self.cancel is not None and not callable(self.cancel):
            raise ValueError(f"RunPolicy.cancel must be a callable or None, got {self.cancel!r}")
        retries = self.max_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"RunPolicy.max_retries must be an integer >= 0, got {retries!r}")
        for key in ("input_guardrails", "output_guardrails"):
            object.__setattr__(self, key, check_guardrails(getattr(self, key), f"RunPolicy.{key}"))
        limit = self.max_result_chars
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"RunPolicy.max_result_chars must be an integer >= 1 or None, got {limit!r}")

    @property
    def has_numeric_cap(self) -> bool:
        # The core's rule, so there is one (validation has already passed in __post_init__).
        return _native.check_run_limits(
            self.max_llm_calls, self.max_tool_calls, self.max_tokens, self.deadline_seconds
        )


def pipeline_settings(policy: RunPolicy | None) -> tuple[Any, RepairSetting, int | None]:
    """What a run's call pipeline takes of its policy: ``isolate``, ``repair`` and
    ``max_result_chars`` (the defaults without one)."""
    if policy is None:
        return None, "full", None
    return policy.isolate, policy.repair, policy.max_result_chars


class RunBudget:
    """One run's accounting against a policy (the counters and checks live in the core).

    A sub-agent's run (``Agent.as_tool``) has the calling run's budget as ``parent``: every
    admission and every count goes through the parent too, so the caller's deadline, ``cancel``
    and caps hold for the whole tree of runs."""

    __slots__ = ("_cancel", "_core", "_start", "exact", "parent")

    def __init__(self, policy: RunPolicy | None, parent: RunBudget | None = None) -> None:
        if policy is None:
            self._core = _native.RunBudget(None, None, None, None)
            self._cancel = None
        else:
            self._core = _native.RunBudget(
                policy.max_llm_calls, policy.max_tool_calls, policy.max_tokens, policy.deadline_seconds
            )
            self._cancel = policy.cancel
        self._start = time.monotonic()
        self.parent = parent
        # A numeric cap here or above: tool calls run one at a time so each admission is exact.
        own = policy is not None and policy.has_numeric_cap
        self.exact: bool = own or (parent is not None and parent.exact)

    def _check_cancel(self) -> None:
        if self._cancel is not None and self._cancel():
            raise RunCancelled("run was cancelled")

    @staticmethod
    def _raise(err: tuple[str, str] | None) -> None:
        if err is not None:
            kind, message = err
            raise RunLimitExceeded(message, kind)

    def _elapsed(self) -> float:
        return time.monotonic() - self._start

    def admit_llm(self) -> None:
        if self.parent is not None:
            self.parent.admit_llm()
        self._check_cancel()
        self._raise(self._core.admit_llm(self._elapsed()))

    def record_llm(self, tokens: int) -> None:
        err = self._core.record_llm(tokens, self._elapsed())
        if self.parent is not None:
            self.parent.record_llm(tokens)
        self._raise(err)

    def admit_tool(self) -> None:
        if self.parent is not None:
            self.parent.admit_tool()
        self._check_cancel()
        self._raise(self._core.admit_tool(self._elapsed()))

    def record_tool(self) -> None:
        if self.parent is not None:
            self.parent.record_tool()
        self._core.record_tool()

    def time_left(self) -> float | None:
        """Seconds left before the run's deadline (or a calling run's), or None without one."""
        left = self._core.time_left(self._elapsed())
        above = self.parent.time_left() if self.parent is not None else None
        if left is None:
            return above
        return left if above is None else min(left, above)

    def cap_timeout(self, timeout: float | None) -> float | None:
        """A tool call's timeout, shortened to the time left before the run's deadline."""
        left = self.time_left()
        if left is None:
            return timeout
        return left if timeout is None else min(timeout, left)

    def deadline_passed(self) -> RunLimitExceeded:
        """The error for a wait cut short by the deadline (this run's or a calling run's)."""
        budget: RunBudget | None = self
        while budget is not None:
            try:
                budget._raise(budget._core.admit_llm(budget._elapsed()))
            except RunLimitExceeded as exc:
                if exc.kind == "deadline":
                    return exc
            budget = budget.parent
        return RunLimitExceeded("exceeded the run's wall-clock time limit", "deadline")


async def before_deadline(call: Awaitable[T], budget: RunBudget | None) -> T:
    """Awaits one model call, cut short when the run's deadline passes. Only the deadline
    becomes :class:`RunLimitExceeded`: a TimeoutError the call raises itself (a client's read
    timeout, say) goes up unchanged, as it does from a synchronous model."""
    left = budget.time_left() if budget is not None else None
    if budget is None or left is None:
        return await call
    if left <= 0:
        # Passed already (a hook ran long): the call must not start. `asyncio.timeout(0)` would
        # only cancel it at its first await, after a client has sent its request.
        try:
            return await asyncio.wait_for(call, 0)
        except TimeoutError:
            raise budget.deadline_passed() from None
    deadline = asyncio.timeout(left)
    try:
        async with deadline:
            return await call
    except TimeoutError:
        if deadline.expired():
            raise budget.deadline_passed() from None
        raise


def retries_exceeded(count: int, cap: int, last: str) -> RunLimitExceeded:
    """The error ending a run that asked the model to try again once too often (its tools'
    RetryAgentRun and its invalid typed answers count together)."""
    return RunLimitExceeded(
        f"the model was asked to try again {count} times in this run, more than "
        f"RunPolicy(max_retries={cap}) allows; the last request was: {last}",
        "retries",
    )
