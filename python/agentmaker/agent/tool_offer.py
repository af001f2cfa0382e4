"""The tools a run offers the model: the registry's (minus denied ones), or the ones a
``ToolRetriever`` picks for the run's input, plus those a ``ToolSearchTool`` discovers mid-run."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from agentmaker._native import ToolPermissions
from agentmaker.agent.messages import query_text
from agentmaker.agent.tool_calls import _Run
from agentmaker.agent.worker_threads import shared_threads
from agentmaker.rag.tool_search import ToolRetriever

__all__ = ["ToolOffer"]


class ToolOffer:
    """The tool-choosing half of :class:`~agentmaker.Agent` (a mixin: it reads the agent's
    registry, permissions, retriever and budget)."""

    tool_registry: Any
    permissions: ToolPermissions | None
    tool_retriever: Any
    tool_budget: int | None
    _denials: dict[tuple[str, str | None], str | None]

    async def _offer_tools(self, run: _Run) -> None:
        if self.tool_retriever is not None and self.tool_registry is not None:
            run.tools = await self._retrieved_schema(run)
        else:
            run.tools = self._tool_schema(run)

    def _denial(self, tool: Any) -> str | None:
        perms = self.permissions
        if perms is None:
            return None
        key = (tool.name, getattr(tool, "origin", None))
        try:
            return self._denials[key]
        except KeyError:
            reason = perms.denial_reason(tool)
            self._denials[key] = reason
            return reason

    def _tool_schema(self, run: _Run) -> list[dict[str, Any]] | None:
        reg = self.tool_registry
        if reg is None or len(reg) == 0:
            return None
        deferred = getattr(reg, "_deferred", None)
        if self.permissions is None and not deferred:
            schema = reg.to_openai_schema()
        else:
            names = [n for n in reg.names() if self._offerable(n)]
            schema = reg.to_openai_schema(names=names)
        return schema or None

    def _offerable(self, name: str) -> bool:
        """Offered to the model from the start: permitted, and not registered ``deferred``
        (a deferred tool is offered once a ``tool_search`` finds it)."""
        deferred = getattr(self.tool_registry, "_deferred", None)
        return not (deferred and name in deferred) and self._permitted(name)

    async def _retrieved_schema(self, run: _Run) -> list[dict[str, Any]] | None:
        """Tool-RAG: the retriever picks the tools for this run's input (once per run)."""
        query = query_text(run.messages)
        retriever = self.tool_retriever
        fetch = retriever.schema_for
        hidden = self.permissions is not None or bool(getattr(self.tool_registry, "_deferred", None))
        if hidden and isinstance(retriever, ToolRetriever):
            # Denied and deferred tools must not take any of the retriever's top-k slots.
            fetch = functools.partial(retriever.schema_for, allowed=self._offerable)
        if self.tool_budget is not None:
            fetch = functools.partial(fetch, max_tokens=self.tool_budget)
        if run.sync_entry or not getattr(retriever, "blocking", True):
            schema = fetch(query)
        else:  # retrieval may embed or scan a large index: keep it off the event loop
            schema = await asyncio.wrap_future(shared_threads().submit(fetch, query))
        if hidden:
            reg = self.tool_registry
            schema = [s for s in schema if self._offerable(reg.resolve_name(n := s["function"]["name"]) or n)]
        return list(schema) or None

    def _permitted(self, name: str) -> bool:
        tool = self.tool_registry.get(name)
        return tool is not None and self._denial(tool) is None

    def _expand(self, run: _Run, names: list[str]) -> None:
        """Merge tools discovered mid-run (a ToolSearchTool result's ``data["discovered"]``)."""
        reg = self.tool_registry
        # Rendered names may be wire names: compare real names.
        have = {reg.resolve_name(n) or n for n in (t["function"]["name"] for t in run.tools or ())}
        new = []
        for name in names:
            if isinstance(name, str) and name not in have:
                tool = reg.get(name)
                if tool is not None and self._denial(tool) is None:
                    new.append(name)
                    have.add(name)
        if new:
            # A new list: requests already made keep the list they were sent.
            run.tools = [*(run.tools or ()), *reg.to_openai_schema(names=new)]
