"""Awaiting a started tool call: the one protocol of ``ToolRegistry.aexecute_tool`` and of the
agent's awaited calls. The Rust core starts the call (``StartedCall``) and turns what the
awaited tool gives, or raises, into its result."""

from __future__ import annotations

from typing import Any


async def complete(started: Any) -> Any:
    """Await ``started.awaitable``; its value goes to ``finish``, an exception to ``fail``.
    Cancellation (and anything that is not an ``Exception``) propagates to the caller."""
    try:
        value = await started.awaitable
    except Exception as exc:  # noqa: BLE001 - the core converts it; flow control comes back
        return started.fail(exc)
    return started.finish(value)
