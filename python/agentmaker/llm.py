"""The LLM side of the agent loop: the response type, the duck-typed contract, and an HTTP client.

The contract an object must meet to drive an :class:`~agentmaker.Agent`:

``chat(messages, *, tools=None, **kwargs)``
    ``messages`` is a list of OpenAI-style message dicts (``role``/``content``; assistant messages
    may carry ``tool_calls``; tool messages carry ``tool_call_id``). ``tools`` is the OpenAI
    function-calling list; the agent leaves the keyword out entirely when there are no tools.
    It returns an :class:`LLMResponse`, either directly or as an awaitable (``async def chat``
    works with both ``Agent.run`` and ``Agent.arun``).
``achat(messages, *, tools=None, **kwargs)`` (optional)
    An ``async`` variant, so a client with a blocking ``chat`` never blocks the event loop.
    The agent calls the most-derived of the two: where one class (or the object itself)
    defines both, ``Agent.arun`` uses ``achat`` and ``Agent.run`` uses ``chat``; a subclass
    that overrides only ``chat`` gets ``chat`` in both (an inherited ``achat`` never shadows
    it), and one that overrides only ``achat`` gets ``achat`` in both (``Agent.run`` drives
    the coroutine on its own event loop). See ``agentmaker._llm_dispatch`` for the details.
``supports_function_calling`` (optional, default True)
    False makes ``Agent`` refuse tools at construction.

Tool calls in :attr:`LLMResponse.tool_calls` use the OpenAI shape
``{"id": str, "type": "function", "function": {"name": str, "arguments": "<JSON text>"}}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from . import _native
from ._llm_dispatch import runs_chat_on_a_thread
from .errors import LLMResponseError

__all__ = ["LLMClient", "LLMResponse", "LLMResponseError"]


@dataclass(slots=True)
class LLMResponse:
    """One model reply.

    ``content`` is the text; ``tool_calls`` the OpenAI-style calls (or None); ``usage`` a dict
    with ``prompt_tokens``/``completion_tokens``/``total_tokens`` when the provider reports them;
    ``finish_reason`` as reported. ``assistant_message`` may hold provider state (e.g. reasoning
    fields) that the agent merges into the assistant message it records.
    """

    content: str = ""
    tool_calls: list[dict[str, Any]] | None = None
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    model: str = ""
    latency_ms: float = 0.0
    raw: Any = field(default=None, repr=False)
    assistant_message: dict[str, Any] | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return self.content


_SECRET_ENV = "OPENAI_API_KEY"


class LLMClient:
    """A client for any OpenAI-compatible ``/chat/completions`` endpoint, using only the stdlib.

    ``base_url`` defaults to ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``; ``api_key``
    to ``$OPENAI_API_KEY`` (no key: no Authorization header, which local servers accept).
    Extra keyword arguments (``temperature=...``) are sent with every request; per-call keyword
    arguments to :meth:`chat` override them.

    ``chat`` blocks on the HTTP request; ``achat`` runs the same request on a worker thread so
    ``Agent.arun`` never blocks its event loop.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        headers: dict[str, str] | None = None,
        provider: str = "openai",
        **params: Any,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError("LLMClient needs a model name, e.g. LLMClient('gpt-4o-mini')")
        if not (isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0):
            raise ValueError(f"LLMClient timeout must be a positive number of seconds, got {timeout!r}")
        base = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"LLMClient base_url must start with http:// or https://, got {base!r}")
        self.model = model
        self.provider = provider
        self.base_url = base.rstrip("/")
        self.timeout = float(timeout)
        self.supports_function_calling = True
        self._api_key = api_key if api_key is not None else os.environ.get(_SECRET_ENV)
        self._headers = dict(headers or {})
        self._params = params
        # A local server is reached directly even when the environment sets a proxy (the core's
        # loopback check: localhost, 127.0.0.0/8, ::1; a name is never resolved for it).
        self._opener = (
            urllib.request.build_opener(urllib.request.ProxyHandler({}))
            if _native._is_loopback_url(self.base_url)
            else urllib.request.build_opener()
        )

    def __repr__(self) -> str:
        # The key is deliberately left out.
        return f"LLMClient(model={self.model!r}, base_url={self.base_url!r})"

    def _request_body(self, messages: list[dict], tools: list[dict] | None, kwargs: dict) -> bytes:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        body.update(self._params)
        body.update(kwargs)
        if tools:
            body["tools"] = tools
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def chat(self, messages: list[dict], *, tools: list[dict] | None = None, **kwargs: Any) -> LLMResponse:
        """Send one chat-completions request and parse the reply."""
        data = self._request_body(messages, tools, kwargs)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        headers.update(self._headers)
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=data, headers=headers, method="POST"
        )
        started = time.perf_counter()
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                raw_bytes = resp.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace")[:2000]
            raise LLMResponseError(
                f"chat completion failed with HTTP {exc.code}: {text}", status=exc.code, body=text
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise LLMResponseError(f"could not reach {self.base_url}: {reason}") from None
        latency = (time.perf_counter() - started) * 1000.0
        return parse_chat_completion(raw_bytes, latency_ms=latency)

    @runs_chat_on_a_thread  # a subclass overriding only chat still gets it off the loop
    async def achat(
        self, messages: list[dict], *, tools: list[dict] | None = None, **kwargs: Any
    ) -> LLMResponse:
        """Like :meth:`chat` (the most-derived one), on a worker thread."""
        return await asyncio.to_thread(self.chat, messages, tools=tools, **kwargs)


def parse_chat_completion(raw: bytes | str | dict, *, latency_ms: float = 0.0) -> LLMResponse:
    """Turn an OpenAI chat-completions JSON body into an :class:`LLMResponse`."""
    if isinstance(raw, dict):
        payload = raw
    else:
        try:
            payload = json.loads(raw)
        except ValueError:
            excerpt = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)[:500]
            raise LLMResponseError(f"the endpoint did not return JSON: {excerpt!r}") from None
    if not isinstance(payload, dict):
        raise LLMResponseError(f"a chat completion must be a JSON object, got {type(payload).__name__}")
    if "error" in payload and "choices" not in payload:
        raise LLMResponseError(f"the endpoint returned an error: {payload['error']!r}")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMResponseError("the chat completion has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise LLMResponseError("the first choice of the chat completion has no message")
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    elif not isinstance(content, str):
        content = ""
    tool_calls = message.get("tool_calls") or None
    if tool_calls is not None and not isinstance(tool_calls, list):
        raise LLMResponseError("tool_calls in the chat completion is not a list")
    extra = {k: v for k, v in message.items() if k not in ("role", "content", "tool_calls")}
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
    return LLMResponse(
        content=content,
        tool_calls=tool_calls,
        usage=usage,
        finish_reason=choice.get("finish_reason"),
        model=payload.get("model") or "",
        latency_ms=latency_ms,
        raw=payload,
        assistant_message=extra or None,
    )
