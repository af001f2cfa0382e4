"""Test doubles: a scripted model that needs no network and records what the agent sent it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from agentmaker.llm.client import LLMResponse

__all__ = ["ScriptedLLM", "ScriptedRequest"]


class ScriptedRequest:
    """What one ``chat`` call received: ``messages`` (a copy, taken when first read), ``tools``
    (the function-calling list, or None when the agent sent no tools) and other ``kwargs``."""

    __slots__ = ("_first", "_length", "_messages", "_source", "kwargs", "tools")

    def __init__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, kwargs: dict[str, Any]
    ) -> None:
        # The agent only appends to its message list, but for the system message, which it
        # replaces when the offered tools' instructions change: remembering that message, the
        # list and its length is a faithful snapshot; copying on every call would make long
        # scripted runs quadratic.
        self._source = messages
        self._length = len(messages)
        self._first = messages[0] if messages else None
        self._messages: list[dict[str, Any]] | None = None
        self.tools = tools
        self.kwargs = kwargs

    @property
    def messages(self) -> list[dict[str, Any]]:
        if self._messages is None:
            self._messages = list(self._source[: self._length])
            if self._first is not None:
                self._messages[0] = self._first
        return self._messages

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered on this call (empty when none were sent)."""
        return [t["function"]["name"] for t in self.tools or ()]

    def __repr__(self) -> str:
        return f"ScriptedRequest(messages={self._length} messages, tools={self.tool_names!r})"


Entry = (
    str | LLMResponse | BaseException | Callable[[list[dict[str, Any]], "list[dict[str, Any]] | None"], Any]
)


class ScriptedLLM:
    """A model that replays a fixed script, so agent code runs without a key or a network.

    Each ``chat`` call consumes the next entry:

    - a ``str`` becomes a plain text answer;
    - an :class:`LLMResponse` is returned as is (build tool calls with :meth:`tool_call` or
      :meth:`tool_calls`);
    - an exception instance is raised (to test how callers handle a failing model);
    - a callable gets ``(messages, tools)`` and returns a ``str`` or an ``LLMResponse``.

    ``calls`` counts consumed entries and ``requests`` records what each call received.
    ``chat`` is an ordinary method (the agent calls it without an event loop); ``achat`` is the
    same as a coroutine. A subclass may override either: the agent calls the most-derived one
    on both ``Agent.run`` and ``Agent.arun`` (see :mod:`agentmaker.llm`).
    """

    def __init__(
        self,
        script: Iterable[Entry] | None = None,
        *,
        model: str = "test",
        provider: str = "test",
        supports_function_calling: bool = True,
    ) -> None:
        self.script: list[Entry] = list(script or [])
        self.model = model
        self.provider = provider
        self.supports_function_calling = supports_function_calling
        self.calls = 0
        self.requests: list[ScriptedRequest] = []

    @staticmethod
    def tool_call(
        name: str, arguments: dict[str, Any] | None = None, *, call_id: str = "call_1", content: str = ""
    ) -> LLMResponse:
        """A response that calls one tool with ``arguments`` (serialised as JSON text)."""
        return LLMResponse(
            content=content,
            model="test",
            finish_reason="tool_calls",
            tool_calls=[_call(name, arguments, call_id)],
        )

    @staticmethod
    def tool_calls(*calls: Any, content: str = "") -> LLMResponse:
        """A response with several tool calls in one turn.

        Each call is ``(name, arguments)``, ``(name, arguments, call_id)``, or a response from
        :meth:`tool_call` (its calls are taken over). Calls without an explicit id are numbered
        ``call_1``, ``call_2``, ... by position.
        """
        out: list[dict[str, Any]] = []
        for i, c in enumerate(calls, start=1):
            if isinstance(c, LLMResponse):
                out.extend(c.tool_calls or [])
            elif isinstance(c, tuple) and 1 <= len(c) <= 3:
                name = c[0]
                args = c[1] if len(c) > 1 else None
                cid = c[2] if len(c) > 2 else f"call_{i}"
                out.append(_call(name, args, cid))
            else:
                raise TypeError(
                    "ScriptedLLM.tool_calls takes (name, arguments[, call_id]) tuples or "
                    f"ScriptedLLM.tool_call(...) responses, got {c!r}"
                )
        return LLMResponse(content=content, model="test", finish_reason="tool_calls", tool_calls=out)

    def _next(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, kwargs: dict[str, Any]
    ) -> LLMResponse:
        self.requests.append(ScriptedRequest(messages, tools, kwargs))
        k = self.calls + 1
        if self.calls >= len(self.script):
            raise AssertionError(
                f"ScriptedLLM ran out of script: this is call #{k} but only {len(self.script)} "
                "entries were given; add a reply (a string or an LLMResponse) to the script"
            )
        item = self.script[self.calls]
        self.calls = k
        if isinstance(item, str):
            return LLMResponse(content=item, model=self.model, finish_reason="stop")
        if isinstance(item, LLMResponse):
            return item
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            out = item(messages, tools)
            if isinstance(out, str):
                return LLMResponse(content=out, model=self.model, finish_reason="stop")
            if isinstance(out, LLMResponse):
                return out
            raise TypeError(f"a ScriptedLLM callable entry must return str or LLMResponse, got {out!r}")
        raise TypeError(f"unsupported ScriptedLLM script entry {item!r}")

    def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> LLMResponse:
        return self._next(messages, tools, kwargs)

    async def achat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> LLMResponse:
        return self._next(messages, tools, kwargs)

    @property
    def remaining(self) -> int:
        """Entries not consumed yet."""
        return len(self.script) - self.calls


def _call(name: str, arguments: dict[str, Any] | None, call_id: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments or {}, ensure_ascii=False)},
    }
