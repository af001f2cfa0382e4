"""Approval: rules and a limit around the confirmation of high-risk tool calls.

A call needs confirmation when its tool says so (``requires_confirmation`` or
``needs_confirmation(parameters)``). ``Agent(confirm=Approval(...))`` then decides it, in this
order (the decisions and the texts the model reads are the core's, ``src/executor/approval.rs``):

1. the first rule whose pattern matches the tool's name (``*`` any run of characters, ``?`` one
   character): ``True`` approves the call without asking, ``False`` refuses it without asking;
2. when a person has refused ``max_attempts`` calls of that tool in this run, the call is
   refused without asking, and the model is told not to call the tool again;
3. otherwise ``ask`` decides, as ``Agent(confirm=...)`` would: a callback (sync or async, only
   ``True`` approves), ``"pause"`` (the run pauses for a person), or None.

The default for a call no rule covers is to ask, and with nobody to ask (``ask=None``) the call
is refused: a call that needs confirmation is never approved silently. Rules only see calls
that need confirmation; to keep a tool away from the model altogether use ``ToolPermissions``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

__all__ = ["Approval", "approval_options", "asker"]


class Approval:
    """How calls that need confirmation are approved: ``rules`` (tool name or pattern to
    ``True``/``False``), ``max_attempts`` (refusals of one tool per run before its calls are
    refused unasked) and ``ask`` (who decides the rest). See :mod:`agentmaker.agent.approval`."""

    __slots__ = ("ask", "max_attempts", "rules")

    def __init__(
        self,
        ask: Callable[[Any, dict[str, Any]], Any] | Literal["pause"] | None = None,
        *,
        rules: Mapping[str, bool] | None = None,
        max_attempts: int | None = None,
    ) -> None:
        if ask is not None and ask != "pause" and not callable(ask):
            raise TypeError(
                f'Approval ask must be a callable (tool, parameters) -> bool, "pause" or None, got {ask!r}'
            )
        pairs: list[tuple[str, bool]] = []
        if rules is not None:
            if not isinstance(rules, Mapping):
                raise TypeError(
                    f"Approval rules must be a mapping of tool name patterns to True/False, got {rules!r}"
                )
            for pattern, verdict in rules.items():
                if not isinstance(pattern, str) or not pattern:
                    raise ValueError(f"Approval rule patterns must be non-empty strings, got {pattern!r}")
                if not isinstance(verdict, bool):
                    raise TypeError(f"Approval rule {pattern!r} must map to True or False, got {verdict!r}")
                pairs.append((pattern, verdict))
        if max_attempts is not None and (
            isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1
        ):
            raise ValueError(f"Approval max_attempts must be an integer >= 1 or None, got {max_attempts!r}")
        self.ask = ask
        self.rules: tuple[tuple[str, bool], ...] = tuple(pairs)
        self.max_attempts = max_attempts

    def __repr__(self) -> str:
        return f"Approval(ask={self.ask!r}, rules={dict(self.rules)!r}, max_attempts={self.max_attempts!r})"


def asker(confirm: Any) -> Any:
    """Who is asked about a call no rule decides: the callback, ``"pause"`` or None."""
    return confirm.ask if isinstance(confirm, Approval) else confirm


def approval_options(confirm: Any) -> tuple[list[tuple[str, bool]], int | None]:
    """The rules and the limit a run's ``CallPipeline`` applies."""
    if isinstance(confirm, Approval):
        return list(confirm.rules), confirm.max_attempts
    return [], None
