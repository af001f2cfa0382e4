"""``ToolSearchTool(strategy="model")``: a model chooses the tools for a search.

The candidates are the tools a keyword search would look through (every registered tool but
``tool_search`` itself, restricted to the ones the agent may call); when there are more than
``shortlist`` of them, keyword retrieval shortlists the best ``shortlist`` first. The model
gets the request and the candidates' names and descriptions, and answers with a JSON array of
names. When the model fails (it raises, answers with no array, or names a tool that is not a
candidate), or when the run's limits leave no model call for it, the search falls back to
keyword retrieval. The model call counts in the run's usage (``llm_calls`` and tokens) and
against its ``RunPolicy`` limits, like the agent's own calls.

Privacy: the candidates' names and descriptions, and the model's query, are sent to the model
given as ``llm``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["MODEL_PROMPTS", "choose"]

MODEL_PROMPTS: dict[str, str] = {
    "tool_search.model.instructions": (
        "You pick tools for an AI agent. Below is a request and a catalog of tools. Answer with "
        "only a JSON array of the names of the tools (at most {top_k}) that best serve the "
        "request, most useful first, each name exactly as listed; answer [] when none fits."
    ),
    "tool_search.model.request": "Request: {query}\n\nCatalog:\n{catalog}",
}

_ARRAY = re.compile(r"\[.*?\]", re.DOTALL)


def _names_in(reply: str) -> list[str] | None:
    """The JSON array of names in the model's reply, or None when there is none."""
    for match in _ARRAY.finditer(reply):
        try:
            value = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return None


def choose(
    llm: Any,
    query: str,
    candidates: list[str],
    catalog: str,
    top_k: int,
    texts: dict[str, str],
    run: Any,
    resolve: Callable[[str], str | None],
) -> list[str] | None:
    """The candidates the model chose for ``query`` (in its order, at most ``top_k``), or None
    when the search must fall back to keywords. ``run`` is the calling agent run (None outside
    one): the call is admitted by its limits and counted in its usage."""
    if run is not None and not run.admit_llm():
        return None
    messages = [
        {"role": "system", "content": texts["tool_search.model.instructions"].replace("{top_k}", str(top_k))},
        {
            "role": "user",
            "content": texts["tool_search.model.request"]
            .replace("{query}", query)
            .replace("{catalog}", catalog),
        },
    ]
    try:
        reply = llm.chat(messages)
        if inspect.isawaitable(reply):
            close = getattr(reply, "close", None)
            if close is not None:
                close()
            return None  # an async-only model cannot be waited for here
    except Exception:  # noqa: BLE001 - a failing model falls back to keyword retrieval
        if run is not None:
            run.record_llm(None)
        return None
    if run is not None:
        run.record_llm(getattr(reply, "usage", None))
    content = getattr(reply, "content", None)
    names = _names_in(content) if isinstance(content, str) else None
    if names is None:
        return None
    allowed = set(candidates)
    chosen: list[str] = []
    for name in names:
        real = resolve(name) or name
        if real not in allowed:
            return None  # a name the model made up: its whole answer is not trusted
        if real not in chosen:
            chosen.append(real)
    return chosen[:top_k]
