"""The future an MCP tool's ``arun`` returns (created by the Rust binding)."""

from __future__ import annotations

import asyncio
from typing import Any


class McpCallFuture(asyncio.Future):  # type: ignore[type-arg]
    """One MCP call in flight. Cancelling it (``asyncio.wait_for``, an agent's tool timeout, a
    cancelled task) cancels the call too: the client stops waiting for the answer and the
    server is sent ``notifications/cancelled`` so it can stop the work.

    It also speaks the coroutine protocol (``send``, ``throw``, ``close``), so whatever takes a
    coroutine takes it: ``asyncio.create_task``, ``TaskGroup.create_task``, ``loop.create_task``,
    like any other tool's ``arun()``. ``await``, ``gather`` and ``wait_for`` use it as the future
    it is, with no task made for it. The one consequence: ``asyncio.wait`` refuses it as it
    refuses every coroutine (wrap it with ``create_task``).

    The client's other awaitables (``load_tools``, ``aclose``) are of this class too, with an
    empty hook: cancelling them only stops the wait."""

    __slots__ = ("_am_call", "_am_steps")

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

    # The coroutine protocol, driven by a task: the steps are those of ``await self``.
    def _steps(self) -> Any:
        try:
            return self._am_steps
        except AttributeError:
            steps = self._am_steps = super().__await__()
            return steps

    def send(self, value: Any) -> Any:
        return self._steps().send(value)

    def throw(self, *exc: Any) -> Any:
        return self._steps().throw(*exc)

    def close(self) -> None:
        self._steps().close()
