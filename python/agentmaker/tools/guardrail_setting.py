"""The ``input_guardrails=``/``output_guardrails=`` setting of a tool, an agent or a run policy:
checked where it is given (see :mod:`agentmaker.agent.guardrails` for what guardrails do)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["check_guardrails"]


def check_guardrails(value: Any, where: str) -> tuple[Callable[..., Any], ...]:
    """A guardrail list as given (None, a callable or an iterable of callables), checked."""
    if value is None:
        return ()
    items = [value] if callable(value) else value
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError(f"{where} must be a list of callables taking a ToolCheck, got {value!r}")
    out = tuple(items)
    for g in out:
        if not callable(g):
            raise TypeError(f"{where} must be a list of callables taking a ToolCheck, got {g!r} in it")
    return out
