"""``report_progress``: a tool tells the MCP client of a served call how far it has come."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

__all__ = ["report_progress"]

# (the native server, the call's id, the server's event loop) while a served call whose client
# asked for progress runs; None everywhere else.
CURRENT: ContextVar[tuple[Any, int, asyncio.AbstractEventLoop] | None] = ContextVar(
    "agentmaker_served_call", default=None
)


def report_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    """Report the progress of the tool call running now: ``progress`` so far (it should grow
    with each report), out of ``total`` when known, with an optional ``message``.

    When the call is served over MCP and its client asked for progress (a ``progressToken``),
    the client receives ``notifications/progress``; anywhere else (an agent's call, a direct
    call, a test) this does nothing, so a tool may always call it. Works from async tools and
    from synchronous tools running on worker threads.
    """
    for name, value in (("progress", progress), ("total", total)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if message is not None and not isinstance(message, str):
        raise TypeError(f"message must be a str, got {type(message).__name__}")
    current = CURRENT.get()
    if current is None:
        return
    native, call_id, loop = current
    total_f = None if total is None else float(total)

    def send() -> None:
        native.progress(call_id, float(progress), total_f, message)

    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        send()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(send)
