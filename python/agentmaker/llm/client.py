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
    the coroutine on its own event loop). See ``agentmaker.llm.dispatch`` for the details.
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
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
from agentmaker.errors import LLMResponseError
from agentmaker.llm.dispatch import runs_chat_on_a_thread

__all__ = ["LLMClient", "LLMResponse", "LLMResponseError", "LLMStream"]


@dataclass(slots=True)
class LLMResponse:
    """One model reply.

    ``content`` is the text; ``tool_calls`` the OpenAI-style calls (or None); ``usage`` a dict
    with ``prompt_tokens``/``completion_tokens``/``total_tokens`` when the provider reports them;
    ``finish_reason`` as reported. ``assistant_message`` may hold provider state (e.g. reasoning
    fields, or ``provider_reasoning``: Anthropic's thinking blocks, which must go back with the
    turn) that the agent merges into the assistant message it records.
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


# The one list of providers in the package: each with (key variable, fallback key variable,
# base URL variable, default base URL). The core reads the names in `llm::Provider::parse`.
_PROVIDERS: dict[str, tuple[str, str | None, str, str]] = {
    "openai": ("OPENAI_API_KEY", None, "OPENAI_BASE_URL", "https://api.openai.com/v1"),
    "anthropic": ("ANTHROPIC_API_KEY", None, "ANTHROPIC_BASE_URL", "https://api.anthropic.com/v1"),
    "gemini": (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GEMINI_BASE_URL",
        "https://generativelanguage.googleapis.com/v1beta",
    ),
}


# The provider names, for what else takes one (tool renderings, token budgets).
PROVIDERS: tuple[str, ...] = tuple(_PROVIDERS)


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"LLMClient {name} must be a positive number of seconds, got {value!r}")
    return float(value)


def _response(reply: dict[str, Any], started: float) -> LLMResponse:
    return LLMResponse(
        content=reply["content"],
        tool_calls=reply["tool_calls"],
        usage=reply["usage"],
        finish_reason=reply["finish_reason"],
        model=reply["model"],
        latency_ms=(time.perf_counter() - started) * 1000.0,
        raw=reply["raw"],
        assistant_message=reply["extra"],
    )


class LLMClient:
    """A model endpoint: OpenAI chat completions (and any OpenAI-compatible server: vLLM,
    Ollama, llama.cpp, gateways), Anthropic Messages or Gemini ``generateContent``.

    ``provider`` picks the wire format (``"openai"``, ``"anthropic"``, ``"gemini"``).
    ``base_url`` defaults to ``$OPENAI_BASE_URL`` / ``$ANTHROPIC_BASE_URL`` /
    ``$GEMINI_BASE_URL``, else the provider's public URL. ``api_key`` defaults to
    ``$OPENAI_API_KEY`` / ``$ANTHROPIC_API_KEY`` / ``$GEMINI_API_KEY`` (or ``$GOOGLE_API_KEY``);
    without one no key header is sent, which local servers accept. The key lives only in the
    native endpoint: it is in no attribute, ``repr``, log or error message (a provider's error
    that echoes it has it replaced by ``[redacted]``).

    Requests go through the package's HTTP client in the Rust core: connections are pooled
    and kept alive across calls of one client, ``chat`` waits with the GIL released, and
    ``achat`` is awaited on the running loop without a thread (cancelling it aborts the
    request). Failures raise :class:`LLMResponseError` (with ``status`` and ``body`` when the
    server answered).

    ``max_retries`` (default 2) retries on 429, any 5xx and connection failures, waiting
    0.5 s, 1 s, 2 s ... (capped at 8 s, up to 25% less at random), or exactly what a
    ``Retry-After`` header of at most 60 s asks. A read timeout is not retried (the model may
    still be generating; a retry would pay for it twice). ``connect_timeout`` bounds opening a
    connection, ``read_timeout`` any wait for the next bytes of the response (so a long stream
    that keeps sending is never cut); both default to ``timeout``.

    Extra keyword arguments (``temperature=0``, ``max_tokens=...``, ``tool_choice=...``,
    ``parallel_tool_calls=False``) are sent with every request, in OpenAI's names; the
    Anthropic and Gemini codecs map them to their own. Per-call keyword arguments override
    them. ``headers`` are added to every request and replace the codec's own header of the same
    name (e.g. ``{"anthropic-version": ...}`` over the default ``2023-06-01``).
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float | None = None,
        read_timeout: float | None = None,
        max_retries: int = 2,
        headers: dict[str, str] | None = None,
        **params: Any,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError("LLMClient needs a model name, e.g. LLMClient('gpt-4o-mini')")
        if not isinstance(provider, str) or provider.lower() not in _PROVIDERS:
            raise ValueError(
                f"LLMClient provider must be 'openai' (also for OpenAI-compatible servers), "
                f"'anthropic' or 'gemini', got {provider!r}"
            )
        provider = provider.lower()
        key_var, key_fallback, url_var, default_url = _PROVIDERS[provider]
        self.timeout = _seconds("timeout", timeout)
        connect = self.timeout if connect_timeout is None else _seconds("connect_timeout", connect_timeout)
        read = self.timeout if read_timeout is None else _seconds("read_timeout", read_timeout)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or not 0 <= max_retries <= 100:
            raise ValueError(f"LLMClient max_retries must be an integer from 0 to 100, got {max_retries!r}")
        base = base_url or os.environ.get(url_var) or default_url
        if not isinstance(base, str) or not base.startswith(("http://", "https://")):
            raise ValueError(f"LLMClient base_url must start with http:// or https://, got {base!r}")
        extra = dict(headers or {})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
            raise TypeError("LLMClient headers must map str to str")
        if api_key is None:
            api_key = os.environ.get(key_var) or (key_fallback and os.environ.get(key_fallback)) or None
        self.model = model
        self.provider = provider
        self.base_url = base.rstrip("/")
        self.connect_timeout = connect
        self.read_timeout = read
        self.max_retries = max_retries
        self.supports_function_calling = True
        self._params = params
        # A loopback base_url is reached directly even when the environment sets a proxy
        # (localhost, 127.0.0.0/8, ::1; a name is never resolved for it).
        self._endpoint = _native._LlmEndpoint(
            provider, model, self.base_url, api_key, list(extra.items()), connect, read, max_retries
        )

    def __repr__(self) -> str:
        # The key is deliberately left out.
        return f"LLMClient(model={self.model!r}, provider={self.provider!r}, base_url={self.base_url!r})"

    def _call_params(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        params = {**self._params, **kwargs}
        stream = bool(params.pop("stream", False))
        return params, stream

    def chat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> LLMResponse:
        """Send one request and return the reply (``stream=True`` streams it and returns the
        assembled reply)."""
        params, stream = self._call_params(kwargs)
        started = time.perf_counter()
        if stream:
            s = LLMStream(self._endpoint.stream(messages, tools, params), started)
            for _ in s:
                pass
            return s.response
        return _response(self._endpoint.chat(messages, tools, params), started)

    @runs_chat_on_a_thread  # a subclass overriding only chat still gets it, off the loop
    async def achat(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> LLMResponse:
        """Like :meth:`chat`, awaited on the running loop; cancelling it aborts the request.
        In a subclass that overrides ``chat``, runs that ``chat`` on a worker thread."""
        if type(self).chat is not LLMClient.chat:
            return await asyncio.to_thread(self.chat, messages, tools=tools, **kwargs)
        params, stream = self._call_params(kwargs)
        started = time.perf_counter()
        if stream:
            s = LLMStream(self._endpoint.stream(messages, tools, params), started)
            async for _ in s:
                pass
            return s.response
        return _response(await self._endpoint.achat(messages, tools, params), started)

    def stream(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> LLMStream:
        """Stream one reply: iterate (``for``, or ``async for``) over its text deltas; then
        :attr:`LLMStream.response` holds the whole reply with its tool calls assembled. The
        request is sent on the first read."""
        params, _ = self._call_params(kwargs)
        return LLMStream(self._endpoint.stream(messages, tools, params), time.perf_counter())

    def astream(
        self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> LLMStream:
        """:meth:`stream`, named for ``async for delta in client.astream(...)``."""
        return self.stream(messages, tools=tools, **kwargs)


class LLMStream:
    """One streamed reply. Iterating (``for`` or ``async for``) yields its text as it
    arrives; tool calls, whose arguments may arrive over many events, are assembled and
    found in :attr:`response` with the text, usage and finish reason once the iteration
    ended. ``close()`` / ``aclose()`` (or leaving a ``with`` / ``async with`` block) stops
    reading and closes the connection; cancelling a task waiting on ``async for`` does too.
    """

    def __init__(self, native: Any, started: float) -> None:
        self._native = native
        self._started = started
        self._response: LLMResponse | None = None

    def _end(self) -> None:
        reply = self._native.reply()
        if reply is not None:
            self._response = _response(reply, self._started)

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        delta: str | None = self._native.next_delta()
        if delta is None:
            self._end()
            raise StopIteration
        return delta

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        delta: str | None = await self._native.anext_delta()
        if delta is None:
            self._end()
            raise StopAsyncIteration
        return delta

    @property
    def response(self) -> LLMResponse:
        """The whole reply; only once the iteration has ended."""
        if self._response is None:
            raise RuntimeError("the stream has not finished: iterate over it to the end first")
        return self._response

    def close(self) -> None:
        """Stop reading; the connection is closed."""
        self._native.close()

    async def aclose(self) -> None:
        self._native.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def parse_chat_completion(raw: bytes | str | dict[str, Any], *, latency_ms: float = 0.0) -> LLMResponse:
    """Turn an OpenAI chat-completions JSON body into an :class:`LLMResponse` (the core's
    OpenAI codec reads it)."""
    if isinstance(raw, dict):
        raw = json.dumps(raw)
    body = raw.encode("utf-8") if isinstance(raw, str) else raw
    reply = _native._parse_llm_reply("openai", body)
    response = _response(reply, time.perf_counter())
    response.latency_ms = latency_ms
    return response
