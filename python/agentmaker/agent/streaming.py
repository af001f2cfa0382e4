"""``Agent.astream`` / ``stream``: a run's events as they happen, and the model's text in pieces.

The run itself is the ordinary one (``Agent.arun``) in a task; its events go through a
:class:`Feed` to the consumer, in lockstep at the run's checkpoints. ``stream`` drives the same
async generator on an event loop of its own, on the calling thread.

Text pieces: when the model object has ``astream(messages, *, tools=None)`` (an async iterator)
or ``stream(...)`` (an iterator), a streamed run calls it instead of ``chat``. It yields text
pieces (``str``) and, last, the complete ``LLMResponse`` (with any tool calls), or keeps that
reply in its ``response`` attribute once iterated (``LLMClient``'s ``LLMStream``); without
either, the pieces joined are the reply. A model without either method is called as usual
and its whole text is one :class:`~agentmaker.events.TextDelta`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from agentmaker.agent.events import RunEvent, TextDelta
from agentmaker.agent.sync_driver import _cancel_leftovers, in_running_loop
from agentmaker.agent.worker_threads import shared_threads
from agentmaker.llm.client import LLMResponse

__all__ = ["Feed", "event_stream", "has_stream", "streamed_chat", "sync_stream"]

_DONE = object()


def has_stream(llm: object) -> bool:
    return callable(getattr(llm, "astream", None)) or callable(getattr(llm, "stream", None))


def _piece(item: object, turn: int, pieces: list[str], observe: Callable[[RunEvent], None]) -> Any:
    if isinstance(item, str):
        if item:
            pieces.append(item)
            observe(TextDelta(turn, item))
        return None
    if isinstance(item, LLMResponse):
        return item
    raise TypeError(
        f"the model's stream yielded a {type(item).__name__}; expected text pieces (str) and, "
        "last, the complete LLMResponse"
    )


async def streamed_chat(
    llm: Any, messages: list[Any], tools: list[Any] | None, turn: int, observe: Callable[[RunEvent], None]
) -> Any:
    """One model call through its stream: reports each text piece, returns the reply."""
    kwargs = {"tools": tools} if tools else {}
    pieces: list[str] = []
    final = None
    astream = getattr(llm, "astream", None)
    if callable(astream):
        source = astream(messages, **kwargs)
        async for item in source:
            final = _piece(item, turn, pieces, observe) or final
    else:  # a blocking iterator: each next() on a worker thread, so the loop never blocks
        source = llm.stream(messages, **kwargs)
        it = iter(source)
        pool = shared_threads()
        while (item := await asyncio.wrap_future(pool.submit(next, it, _DONE))) is not _DONE:
            final = _piece(item, turn, pieces, observe) or final
    if final is None:
        kept = getattr(type(source), "response", None)  # looked up on the type: no property runs yet
        if kept is not None and isinstance(reply := source.response, LLMResponse):
            final = reply
    return final if final is not None else LLMResponse(content="".join(pieces))


class Feed:
    """The hand-over between a streamed run and its consumer. The run puts events in as they
    happen; at its checkpoints (before each model call and each group of tool calls) it waits
    until the consumer has taken every event and asked for the next, so a consumer that stops
    reading stops the run before its next step, and one that leaves cancels it there."""

    __slots__ = ("items", "wake", "wants")

    def __init__(self) -> None:
        self.items: deque[RunEvent] = deque()
        self.wake = asyncio.Event()
        self.wants = asyncio.Event()

    def put(self, event: RunEvent) -> None:
        self.items.append(event)
        self.wake.set()

    async def ready(self) -> None:
        # ``wants`` may still be set from before this run's latest events were put in: those
        # must be taken first, and the consumer sets it again once it has taken them all.
        while self.items or not self.wants.is_set():
            if self.items:
                self.wants.clear()
            await self.wants.wait()


async def event_stream(start: Callable[[Feed], Any]) -> AsyncIterator[RunEvent]:
    """Runs ``start(feed)`` (the run's coroutine) in a task and yields its events; the run's
    exception, if it fails, is raised after the events it produced."""
    feed = Feed()
    task = asyncio.ensure_future(start(feed))
    task.add_done_callback(lambda _: feed.wake.set())
    try:
        while True:
            if feed.items:
                feed.wants.clear()
                yield feed.items.popleft()
                continue
            if task.done():
                break
            feed.wake.clear()
            feed.wants.set()
            await feed.wake.wait()
        task.result()
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def sync_stream(events: AsyncIterator[RunEvent], name: str) -> Iterator[RunEvent]:
    """The blocking form of an event stream, on a private event loop on this thread."""
    if in_running_loop():
        raise RuntimeError(
            f"Agent.{name}() was called while an event loop is running in this thread; "
            f"use `async for event in agent.a{name}(...)` instead"
        )
    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                event = loop.run_until_complete(events.__anext__())
            except StopAsyncIteration:
                return
            yield event
    finally:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(events.aclose())  # type: ignore[attr-defined]
        _cancel_leftovers(loop)
        loop.close()
