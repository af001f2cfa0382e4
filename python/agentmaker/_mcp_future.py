"""The future the Rust binding resolves for one MCP operation (a call, a listing, a close).

The public methods (``MCPTool.arun``, ``MCPClient.load_tools`` ...) return coroutines that
await one of these (see ``_coroutines``); the agent loop and the registry await them directly.
"""

from __future__ import annotations

import asyncio
from typing import Any


class McpFuture(asyncio.Future):  # type: ignore[type-arg]
    """An asyncio future whose ``cancel`` also runs the hook the binding put in ``_am_call``:
    for a tool call, the client stops waiting for the answer and the server is sent
    ``notifications/cancelled``; for a handshake, the server it started is stopped. Closing
    and listing have an empty hook: cancelling them only stops the wait.

    A task awaiting it that is cancelled (``asyncio.wait_for``, an agent's tool timeout,
    ``task.cancel()``) cancels it, so the cancellation reaches the server."""

    __slots__ = ("_am_call",)

    def cancel(self, msg: Any = None) -> bool:
        try:
            return super().cancel(msg)
        finally:
            # Also when scheduling the done-callbacks raised (a closed loop): the future is
            # cancelled by then, and the server must still hear of it.
            call = getattr(self, "_am_call", None)
            if call is not None and self.cancelled():
                self._am_call = None
                call.cancel()
