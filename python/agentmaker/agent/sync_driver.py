"""Run the agent's coroutine from synchronous code without paying for an event loop it does not need.

``asyncio.run`` costs ~135 µs per call on the machines we measured (loop creation, signal handler
setup, shutdown passes): more than a whole scripted agent run. Most sync runs never wait on
anything (a sync model, sync tools run inline), so :func:`run_sync` steps the coroutine by hand
with ``send(None)``. The loop code asks for a real event loop explicitly by awaiting
:data:`NEED_LOOP` right before it does something that does (awaits user coroutines, gathers,
timeouts, threads); from then on the rest of the run continues inside a task on a loop that is
created once per thread and reused.

Nothing else is ever awaited in hand-stepped mode, so user code never runs under a fake or
half-set-up loop: sync tools called inline see a thread with no running loop, exactly as in a
plain script (they may even call ``asyncio.run`` themselves).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import types
from collections.abc import Coroutine, Generator, Iterator
from typing import Any, TypeVar, cast

T = TypeVar("T")


class _NeedLoop:
    """Awaited by the loop code to leave hand-stepped mode."""

    __slots__ = ()

    def __await__(self) -> Generator[_NeedLoop, None, None]:
        yield self

    def __repr__(self) -> str:
        return "NEED_LOOP"


NEED_LOOP = _NeedLoop()


class _LoopHolder:
    """Owns one thread's private loop; closes it when the thread (or the interpreter) ends."""

    __slots__ = ("__weakref__", "loop")

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        loop = self.loop
        if not loop.is_closed() and not loop.is_running():
            with contextlib.suppress(Exception):  # best effort at teardown
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # never raise from a finaliser
            self.close()


_local = threading.local()
_main_holder: _LoopHolder | None = None


def _thread_loop() -> asyncio.AbstractEventLoop:
    holder = getattr(_local, "holder", None)
    if holder is None or holder.loop.is_closed():
        holder = _LoopHolder()
        _local.holder = holder
        if threading.current_thread() is threading.main_thread():
            global _main_holder
            _main_holder = holder
    return holder.loop


@atexit.register
def _close_main_loop() -> None:
    if _main_holder is not None:
        _main_holder.close()


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T]) -> Generator[Any, Any, T]:
    """Forward a half-run coroutine's awaits to the task that now runs it."""
    value: Any = None
    exc: BaseException | None = None
    while True:
        try:
            yielded = coro.send(value) if exc is None else coro.throw(exc)
        except StopIteration as stop:  # carries what the coroutine returned
            return cast("T", stop.value)
        if yielded is NEED_LOOP:  # already on a loop
            value, exc = None, None
            continue
        try:
            value = yield yielded
            exc = None
        except BaseException as e:  # noqa: BLE001 - cancellation and friends go into the coroutine
            value, exc = None, e


async def _continue(coro: Coroutine[Any, Any, T]) -> T:
    return await _resume(coro)


def in_running_loop() -> bool:
    return asyncio._get_running_loop() is not None


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code (no loop may be running in this thread)."""
    try:
        yielded = coro.send(None)
    except StopIteration as stop:  # carries what the coroutine returned
        return cast("T", stop.value)
    if yielded is not NEED_LOOP:
        coro.close()
        raise RuntimeError(
            f"internal error: the agent loop awaited {yielded!r} without asking for an event loop"
        )
    loop = _thread_loop()
    if not loop.is_running():
        try:
            return loop.run_until_complete(_continue(coro))
        finally:
            _cancel_leftovers(loop)
    # A run nested inside a sync tool of an outer run on this thread: the thread's loop is busy
    # with the outer run, so this one gets a loop of its own.
    nested = asyncio.new_event_loop()
    try:
        return nested.run_until_complete(_continue(coro))
    finally:
        _cancel_leftovers(nested)
        nested.close()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Like ``asyncio.run``: when a sync run returns (or is interrupted), nothing it started is
    left pending on the loop, where it would otherwise wake up inside some later run."""
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    with contextlib.suppress(BaseException):
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


@contextlib.contextmanager
def loop_hidden() -> Iterator[None]:
    """Run sync user code from inside our private loop as if no loop were running, as it would
    in a plain script (so it may call ``asyncio.run`` or a nested ``Agent.run``). Safe because
    the code is synchronous: the hidden loop cannot be needed while it runs."""
    loop = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    try:
        yield
    finally:
        asyncio._set_running_loop(loop)
