"""Fitting retrieved tools into a prompt budget measured in tokens.

What a model provider bills for tools is the tokens of their rendered schemas, not their number.
:func:`estimate_tokens` gives a deterministic estimate that needs no tokenizer, and
:func:`fit_to_budget` keeps the best-ranked tools whose schemas fit (used by
``ToolRetriever.schema_for(..., max_tokens=N)`` and ``Agent(tool_budget=N)``).

The estimate
------------
A rendered tool is serialised as compact JSON (``json.dumps(tool, separators=(",", ":"),
ensure_ascii=False)``, keys in their rendered order) and cut into pieces the way the cl100k and
o200k pre-tokenizers cut text (a token never spans two pieces): a word with at most one leading
non-letter, a run of up to three digits, a run of punctuation, whitespace, a run of non-ASCII
characters. Each piece is charged what it costs at most in practice:

- a word: per case segment (``createdAtUtc`` is ``created`` ``At`` ``Utc``), one token plus one
  per 6 letters, or one plus one per 2 letters after the first for an all-capitals segment
  (codes such as ``AFN`` are rare tokens);
- up to three digits, or whitespace: one token;
- punctuation: one token for up to three characters (``","``, ``":{"``), then one per two more;
- non-ASCII text: one token per 1.5 UTF-8 bytes (CJK is one to two tokens a character);

and the sum is raised by 15%. The old rule (a third of the characters) undercounted schemas
made of short pieces: enums of codes, versions, dates, addresses and numbers counted up to 1.95
times their estimate. On enum- and number-heavy catalogs the estimate bounds the real cl100k
and o200k count from above (``tests/test_tool_budget_bound.py`` checks it with tiktoken); on
ordinary tools it is about 1.5 times the real count. It is the same on every machine and Python
version, so a budget picks the same tools everywhere.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from agentmaker.llm.client import PROVIDERS

__all__ = ["PROVIDERS", "check_budget", "check_top_k", "estimate_tokens", "fit_to_budget", "render_one"]


# The pieces a cl100k/o200k pre-tokenizer cuts text into, in ASCII classes (a non-ASCII run is
# one piece here and is charged by its bytes).
_PIECE = re.compile(
    r"(?P<word>[^\r\nA-Za-z0-9\x80-\U0010ffff]?[A-Za-z]+)"
    r"|(?P<one>[0-9]{1,3}|\s+(?!\S)|\s)"
    r"|(?P<punct> ?[^\sA-Za-z0-9\x80-\U0010ffff]+[\r\n]*)"
    r"|(?P<other>[^\x00-\x7f]+)"
)
# o200k cuts words at case changes; cl100k's merges rarely cross them either.
_CASE_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def estimate_tokens(value: Any) -> int:
    """The token estimate of ``value``: a string as is, anything else as compact JSON (see the
    module docstring for the rule)."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    total = 0
    for m in _PIECE.finditer(text):
        kind, piece = m.lastgroup, m.group()
        if kind == "word":
            for seg in _CASE_SEGMENT.findall(piece):
                total += 1 + (len(seg) - 1) // 2 if seg.isupper() else 1 + len(seg) // 6
        elif kind == "one":
            total += 1
        elif kind == "punct":
            total += 1 if len(piece) <= 3 else 1 + (len(piece) - 2) // 2
        else:
            total += math.ceil(len(piece.encode()) * 2 / 3)
    return (total * 23 + 19) // 20  # ceil(total * 1.15)


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
