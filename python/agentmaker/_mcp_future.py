"""The future an MCP tool's ``arun`` returns (created by the Rust binding)."""

from __future__ import annotations

import asyncio
from typing import Any


class McpCallFuture(asyncio.Future):  # type: ignore[type-arg]
    """One MCP call in flight. Cancelling it (``asyncio.wait_for``, an agent's tool timeout, a
    cancelled task) cancels the call too: the client stops waiting for the answer and the
    server is sent ``notifications/cancelled`` so it can stop the work.

    The client's other awaitables (``load_tools``, ``aclose``) are of this class too, with an
    empty hook: cancelling them only stops the wait."""

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
