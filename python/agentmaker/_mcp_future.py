"""The futures of the MCP client (created by the Rust binding, and by ``aexecute_tool``)."""

from __future__ import annotations

import asyncio
from asyncio import _get_running_loop as _running_loop
from collections.abc import Coroutine
from typing import Any


class McpFuture(asyncio.Future):  # type: ignore[type-arg]
    """An asyncio future whose ``cancel`` also runs the hook the binding put in ``_am_call``.

    ``load_tools``, ``aclose`` and entering the client return one with an empty hook (or one
    that stops a handshake): cancelling them only stops the wait."""

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


class McpCallFuture(McpFuture, Coroutine[Any, Any, Any]):
    """One MCP call. Cancelling it (``asyncio.wait_for``, an agent's tool timeout, a cancelled
    task) cancels the call too: the client stops waiting for the answer and the server is sent
    ``notifications/cancelled`` so it can stop the work.

    ``MCPTool.arun()`` sends its call at once. ``registry.aexecute_tool()`` inside a running
    loop returns one that sends its call on first use, like a coroutine that runs when awaited:
    when awaited, gathered (``gather`` adds a callback: no task is made for it), passed to
    ``wait_for``/``shield``, or run as a task.

    It also speaks the coroutine protocol (``send``, ``throw``, ``close``), so whatever takes a
    coroutine takes it: ``asyncio.create_task``, ``TaskGroup.create_task``,
    ``loop.create_task``, like any other tool's ``arun()``. A task over it that is cancelled,
    even before it starts, cancels the call. Like every coroutine, ``asyncio.wait`` refuses it
    (wrap it with ``create_task``)."""

    __slots__ = ("_am_elsewhere", "_am_lazy")

    @classmethod
    def _unsent(
        cls, loop: asyncio.AbstractEventLoop, registry: Any, name: str, parameters: Any
    ) -> McpCallFuture:
        fut = cls(loop=loop)
        fut._am_lazy = (registry, name, parameters)
        return fut

    def _am_go(self) -> None:
        """Send the call if ``aexecute_tool`` left it unsent (it is a no-op after that)."""
        lazy = getattr(self, "_am_lazy", None)
        if lazy is None:
            return
        running = _running_loop()
        if running is not None and running is not self.get_loop():
            raise RuntimeError(
                "this MCP call belongs to another event loop (aexecute_tool was called while "
                "that loop ran); call aexecute_tool on the loop that awaits it"
            )
        self._am_lazy = None
        if self.done():  # cancelled before it was sent: there is nothing to tell the server
            return
        registry, name, parameters = lazy
        if not registry._send_mcp(self, name, parameters):  # replaced by a tool of another kind
            task = self.get_loop().create_task(registry._aexecute(name, parameters))
            task.add_done_callback(self._am_copy)

    def _am_copy(self, task: asyncio.Task[Any]) -> None:
        if self.done():
            return
        if task.cancelled():
            self.cancel()
        elif task.exception() is not None:
            self.set_exception(task.exception())  # type: ignore[arg-type]
        else:
            self.set_result(task.result())

    def _am_move(self) -> Any:
        """Driven from another loop before being sent: the call is made there instead (as the
        coroutine ``aexecute_tool`` would have returned), and this future is left unused."""
        running = _running_loop()
        lazy = getattr(self, "_am_lazy", None)
        if lazy is None or running is None or running is self.get_loop():
            return None
        self._am_lazy = None
        registry, name, parameters = lazy
        inner = self._am_elsewhere = registry._aexecute(name, parameters)
        return inner

    def add_done_callback(self, fn: Any, *, context: Any = None) -> None:
        self._am_go()
        super().add_done_callback(fn, context=context)

    def __await__(self) -> Any:
        inner = self._am_move()
        if inner is not None:
            return inner.__await__()
        self._am_go()
        return super().__await__()

    __iter__ = __await__

    # The coroutine protocol, for a task driving it. Stateless (the future's own state says
    # where it is), so any number of tasks may await it, like ``await`` can.
    def send(self, value: Any) -> Any:
        inner = getattr(self, "_am_elsewhere", None) or self._am_move()
        if inner is not None:
            return inner.send(value)
        if not self.done():
            self._am_go()
            if not self.done():
                self._asyncio_future_blocking = True
                return self
        raise StopIteration(self.result())

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        inner = getattr(self, "_am_elsewhere", None)
        if inner is not None:
            return inner.throw(typ) if val is None and tb is None else inner.throw(typ, val, tb)
        # The task awaiting this gives up on it (cancelled, most often): so does the call.
        self.cancel()
        if isinstance(typ, BaseException):
            raise typ
        if val is None:
            val = typ()
        elif not isinstance(val, BaseException):
            val = typ(val)
        raise val.with_traceback(tb) if tb is not None else val

    def close(self) -> None:
        inner = getattr(self, "_am_elsewhere", None)
        if inner is not None:
            inner.close()
        else:
            self.cancel()
