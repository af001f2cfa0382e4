"""``ToolSearchTool(strategy="model")``: a model chooses the tools for a search.

The candidates are the tools a keyword search would look through (every registered tool but
``tool_search`` itself, restricted to the ones the agent may call); when there are more than
``shortlist`` of them, keyword retrieval shortlists the best ``shortlist`` first. The model
gets the request and the candidates' names and descriptions, and answers with a JSON array of
names. When the model fails (it raises, answers with no array, or names a tool that is not a
candidate), or when the run's limits leave no model call for it, the search falls back to
keyword retrieval.

How the model is called: in an agent run, through what the agent hands the call
(:mod:`agentmaker.agent.tool_model_calls`): the method the agent itself would use for the
run's entry point, under the run's limits and deadline, counted in its usage and reported as
``LLMStart``/``LLMEnd`` events. Outside a run, ``registry.execute_tool`` calls the model's
blocking ``chat`` (:func:`ask`) and ``registry.aexecute_tool`` its ``achat`` (:func:`aask`).

Privacy: the candidates' names and descriptions, and the model's query, are sent to the model
given as ``llm``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable
from typing import Any

from agentmaker.llm.dispatch import chat_method
from agentmaker.tools.run_context import RUN_KEY

__all__ = ["MODEL_PROMPTS", "aask", "ask", "chosen", "handed", "model_request", "request"]

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


def handed(
    parameters: dict[str, Any], allowed: Callable[[str], bool] | None
) -> tuple[Any, Callable[[str], bool] | None]:
    """What the agent handed a call (``agentmaker.agent.tool_model_calls.ToolModelCalls``, or
    None outside a run), and the permission check to apply (the caller's, else the agent's)."""
    calls = parameters.get(RUN_KEY)
    if calls is None:
        return None, allowed
    return calls, allowed if allowed is not None else getattr(calls, "allowed", None)


def model_request(
    retriever: Any,
    exclude: str,
    query: str,
    allowed: Callable[[str], bool] | None,
    shortlist: int,
    top_k: int,
    texts: dict[str, str],
) -> tuple[list[str], list[dict[str, Any]]] | None:
    """The candidates (the registry's tools but ``exclude``, those ``allowed``, shortlisted by
    the keyword ``retriever`` when there are more than ``shortlist``) and the messages asking
    the model to choose among them, or None when there is no candidate."""
    reg = retriever.registry
    pool = [n for n in reg.names() if n != exclude and (allowed is None or allowed(n))]
    if len(pool) > shortlist:
        shortlisted = retriever.retrieve(query, top_k=shortlist, allowed=allowed, on_empty="none")
        pool = [n for n in shortlisted if n != exclude]
    if not pool:
        return None
    catalog = "\n".join(f"- {n}: {(reg.get(n).description or '').strip()}" for n in pool)
    return pool, request(query, catalog, top_k, texts)


def request(query: str, catalog: str, top_k: int, texts: dict[str, str]) -> list[dict[str, Any]]:
    """The messages asking the model to choose among the ``catalog`` for ``query``."""
    return [
        {"role": "system", "content": texts["tool_search.model.instructions"].replace("{top_k}", str(top_k))},
        {
            "role": "user",
            "content": texts["tool_search.model.request"]
            .replace("{query}", query)
            .replace("{catalog}", catalog),
        },
    ]


def chosen(
    reply: Any, candidates: list[str], top_k: int, resolve: Callable[[str], str | None]
) -> list[str] | None:
    """The candidates the model chose in ``reply`` (in its order, at most ``top_k``), or None
    when the search must fall back to keywords (no reply, no array, or a name that is not a
    candidate: then its whole answer is not trusted)."""
    content = getattr(reply, "content", None)
    names = _names_in(content) if isinstance(content, str) else None
    if names is None:
        return None
    allowed = set(candidates)
    picked: list[str] = []
    for name in names:
        real = resolve(name) or name
        if real not in allowed:
            return None
        if real not in picked:
            picked.append(real)
    return picked[:top_k]


def ask(llm: Any, messages: list[dict[str, Any]]) -> Any:
    """Outside an agent run, from blocking code (``registry.execute_tool``): the model's
    reply, or None when it fails. The blocking ``chat`` is called; a model that only answers
    with an awaitable is awaited on an event loop of its own, unless one already runs in this
    thread (then the search falls back to keywords)."""
    try:
        reply = chat_method(llm, True)(messages)
        if inspect.isawaitable(reply):
            if _running_loop() is not None:
                close = getattr(reply, "close", None)
                if close is not None:
                    close()
                return None
            reply = asyncio.run(_awaited(reply))
    except Exception:  # noqa: BLE001 - a failing model falls back to keyword retrieval
        return None
    return reply


async def aask(llm: Any, messages: list[dict[str, Any]]) -> Any:
    """Outside an agent run, from async code (``registry.aexecute_tool``): the model's reply,
    or None when it fails. ``achat`` is awaited; a blocking ``chat`` runs on a worker thread."""
    try:
        method = chat_method(llm, False)
        if inspect.iscoroutinefunction(method):
            return await method(messages)
        reply = await asyncio.to_thread(method, messages)
        if inspect.isawaitable(reply):
            reply = await reply
    except Exception:  # noqa: BLE001 - a failing model falls back to keyword retrieval
        return None
    return reply


async def _awaited(reply: Any) -> Any:
    return await reply


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
