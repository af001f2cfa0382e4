"""The system-prompt section of the tools a request offers: each offered tool's
``instructions`` (``@tool(instructions=...)``, a ``Tool`` subclass's attribute, a
``SkillsTool``'s list of skills) and, while at least one of its tools is offered, its
``Toolkit``'s. Texts come in the tools' registration order, each text once, so the section is
byte-stable for a stable set of offered tools, whatever order a retriever offered them in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeGuard

from agentmaker.tools.toolkit import Toolkit

__all__ = ["ToolInstructions"]


class ToolInstructions:
    """The instructions of an agent's tools, looked up for each request's offered tools.

    ``own`` are the tools the agent registered itself (``Agent(tools=[...])``), or None when it
    was handed a registry. While the registry still holds just those tools and none of them
    (nor a toolkit) has instructions, a request costs no call into the core: the usual case of
    an agent without instructions pays nothing for the feature. Otherwise the offered tools are
    looked up in the registry once per set of offered tools: a rendered tool's form is one
    object until the tool is registered again, so the same objects mean the same tools."""

    __slots__ = ("_kits", "_last", "_list", "_order", "_plain")

    def __init__(self, kits: Iterable[Toolkit], own: Iterable[Any] | None = None) -> None:
        # A toolkit's instructions, by the name of each of its tools.
        self._kits: dict[str, str] = {t.name: k.instructions for k in kits if k.instructions for t in k.tools}
        self._order: tuple[int, dict[str, int]] = (-1, {})
        # The offered forms last looked up, and their texts.
        self._last: tuple[tuple[dict[str, Any], ...], tuple[str, ...]] = ((), ())
        # The offered list last found to hold exactly those forms (lists are replaced, not
        # changed, when a run offers more tools; the length check guards the rest).
        self._list: list[dict[str, Any]] | None = None
        # How many tools the registry holds while none of them can have instructions (-1: unknown).
        plain = own is not None and not self._kits
        tools = list(own or ())
        self._plain = (
            len(tools) if plain and not any(_text(getattr(t, "instructions", None)) for t in tools) else -1
        )

    def texts(self, registry: Any, tools: list[dict[str, Any]] | None) -> tuple[str, ...]:
        """The instruction texts for the offered ``tools`` (OpenAI-shaped schemas)."""
        if not tools or registry is None or len(registry) == self._plain:
            return ()
        forms, texts_before = self._last
        if len(forms) == len(tools) and (tools is self._list or all(a is b for a, b in zip(forms, tools))):
            self._list = tools  # a run offers one list turn after turn: compared once
            return texts_before
        names = tuple(registry.resolve_name(n) or n for n in (t["function"]["name"] for t in tools))
        order = self._registration_order(registry)
        seen: set[str] = set()
        texts: list[str] = []
        for name in sorted(names, key=lambda n: order.get(n, len(order))):
            tool = registry.get(name)
            for text in (self._kits.get(name), getattr(tool, "instructions", None)):
                if _text(text) and text not in seen:
                    seen.add(text)
                    texts.append(text)
        result = tuple(texts)
        self._last = (tuple(tools), result)
        return result

    def _registration_order(self, registry: Any) -> dict[str, int]:
        size, order = self._order
        if size != len(registry):
            order = {name: i for i, name in enumerate(registry.names())}
            self._order = (len(registry), order)
        return order


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())
