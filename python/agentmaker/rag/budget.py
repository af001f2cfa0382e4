"""Fitting retrieved tools into a prompt budget measured in tokens.

What a model provider bills for tools is the tokens of their rendered schemas, not their number.
:func:`estimate_tokens` gives a deterministic estimate that needs no tokenizer, and
:func:`fit_to_budget` keeps the best-ranked tools whose schemas fit (used by
``ToolRetriever.schema_for(..., max_tokens=N)`` and ``Agent(tool_budget=N)``).

The estimate
------------
A rendered tool is serialised as compact JSON (``json.dumps(tool, separators=(",", ":"),
ensure_ascii=False)``, keys in their rendered order) and counted as
``ceil(ascii_characters / 3) + non_ascii_characters``. Provider tokenizers (GPT's o200k and
cl100k, Claude's) average 3.5 to 4.5 ASCII characters per token on English JSON and about one
token per CJK character, so the estimate errs on the high side: a selection that fits the
estimate fits the real count. It is the same on every machine and Python version, so a budget
picks the same tools everywhere.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["PROVIDERS", "check_budget", "check_top_k", "estimate_tokens", "fit_to_budget", "render_one"]

PROVIDERS = ("openai", "anthropic", "gemini")


def estimate_tokens(value: Any) -> int:
    """The token estimate of ``value``: a string as is, anything else as compact JSON."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    ascii_chars = sum(1 for c in text if c < "\x80")
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


def check_top_k(top_k: Any, what: str = "top_k") -> int:
    """``top_k`` (or another count named ``what``) as an integer >= 1."""
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise TypeError(f"{what} must be an integer >= 1, got {top_k!r}")
    if top_k < 1:
        raise ValueError(f"{what} must be >= 1, got {top_k}")
    return top_k


def check_budget(max_tokens: Any, what: str = "max_tokens") -> int:
    """``max_tokens`` as a positive integer (same rule and messages as ``top_k``)."""
    return check_top_k(max_tokens, what)


def render_one(registry: Any, provider: str) -> Callable[[str], list[dict[str, Any]]]:
    """``name -> [rendered tool]`` (empty when the name is not registered) for ``provider``."""
    if provider not in PROVIDERS:
        raise ValueError(f"provider must be one of {PROVIDERS}, got {provider!r}")
    method = getattr(registry, f"to_{provider}_schema")
    return lambda name: method(names=[name])


def fit_to_budget(
    names: Iterable[str],
    render: Callable[[str], list[dict[str, Any]]],
    max_tokens: int,
    *,
    counted: Callable[[str], bool],
    limit: int,
    memo: dict[tuple[str, str], tuple[Any, int]] | None = None,
    provider: str = "openai",
) -> list[dict[str, Any]]:
    """The rendered tools of ``names``, in that order, whose estimates add up to at most
    ``max_tokens``. A tool that does not fit is skipped and the walk goes on, so one huge schema
    does not crowd out the smaller tools ranked after it. At most ``limit`` tools for which
    ``counted(name)`` is true are kept (the retrieved ones; always-included tools are not
    counted). ``memo`` caches estimates per rendered object (the registry caches renderings)."""
    out: list[dict[str, Any]] = []
    left = max_tokens
    taken = 0
    for name in names:
        if taken >= limit and counted(name):
            continue
        rendered = render(name)
        if not rendered:
            continue
        tool = rendered[0]
        key = (provider, name)
        seen = memo.get(key) if memo is not None else None
        if seen is not None and seen[0] is tool:
            cost = seen[1]
        else:
            cost = estimate_tokens(tool)
            if memo is not None:
                memo[key] = (tool, cost)
        if cost > left:
            continue
        left -= cost
        out.append(tool)
        if counted(name):
            taken += 1
    return out
