"""Real coroutines for the native async methods.

Every public ``async`` method of the package returns an object for which
``inspect.iscoroutine()`` is true, so that it can be made anywhere (also where no event loop
runs) and handed to anything asyncio takes: ``asyncio.run``, ``create_task``, ``gather``,
``wait_for``, ``asyncio.timeout``, ``TaskGroup``. Only a Python ``async def`` makes such an
object, so the methods written in Rust return one of these: its body does the native work
when the coroutine runs, on the loop that runs it. Cancelling the task that runs it cancels
what the body awaits (an MCP call, a command's process group).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def call_later(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, called when the coroutine runs (for work that never waits)."""
    return fn(*args)


async def await_later(fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """``await fn(*args)``: ``fn`` starts the work on the running loop and returns what to
    await (it raises asyncio's "no running event loop" when run by no loop)."""
    return await fn(*args)


async def raise_later(exc: BaseException) -> Any:
    """Raises ``exc`` where the coroutine is awaited, as an ``async def`` would."""
    raise exc
