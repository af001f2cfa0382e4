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
    loop returns one that sends its call when first used, like the coroutine it stands for:
    when awaited, when a task runs it, or when an asyncio API waits for it as a future
    (``gather`` and ``shield`` when called, ``wait_for`` and ``as_completed`` when they start
    waiting). Cancelled before, it is never sent. ``gather`` makes no task for it, which is
    the point: hundreds of calls gathered cost much less. The one API that does not wait for
    it is ``asyncio.ensure_future``, which returns a future as it is: a call passed to it is
    sent when something awaits it (use ``create_task`` to fire and forget).

    It also speaks the coroutine protocol (``send``, ``throw``, ``close``), so whatever takes a
    coroutine takes it: ``asyncio.create_task``, ``TaskGroup.create_task``,
    ``loop.create_task``, like any other tool's ``arun()``. A task over it that is cancelled,
    even before it starts, cancels the call, and so does ``close()``. Like every coroutine,
    ``asyncio.wait`` refuses it (wrap it with ``create_task``)."""

    __slots__ = ("_am_elsewhere", "_am_lazy")

    @property
    def __name__(self) -> str:  # what a task's repr shows for the coroutine it runs
        return "McpCallFuture"

    def _am_go(self) -> None:
        """Send the call if ``aexecute_tool`` left it unsent (a no-op after that). A failure to
        send becomes the future's exception, never a future left pending."""
        lazy = getattr(self, "_am_lazy", None)
        if lazy is None:
            return
        # Only ever run on the future's own loop (or before any loop runs): awaited from
        # another one, the call was moved there first (_am_move).
        self._am_lazy = None
        if self.done():  # cancelled before it was sent: there is nothing to tell the server
            return
        registry, name, parameters = lazy
        try:
            if registry._send_mcp(self, name, parameters):
                return
            # Replaced by a tool of another kind since: that tool runs, cancelled with this.
            task = self.get_loop().create_task(registry._aexecute(name, parameters))
        except BaseException as exc:
            if not self.done():  # whoever awaits the call gets the error
                self.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self._am_call = task
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

    def _am_move(self) -> asyncio.Task[Any] | None:
        """Driven from another loop before being sent: the call is made there instead, in a
        task (as the coroutine ``aexecute_tool`` would have been), which is what is awaited
        from then on. This future follows it: it gets the task's outcome on its own loop, and
        cancelling it cancels the task."""
        moved = getattr(self, "_am_elsewhere", None)
        if moved is not None:
            return moved  # type: ignore[no-any-return]
        lazy = getattr(self, "_am_lazy", None)
        running = _running_loop()
        if lazy is None or running is None or running is self.get_loop() or self.done():
            return None
        self._am_lazy = None
        registry, name, parameters = lazy
        moved = self._am_elsewhere = running.create_task(registry._aexecute(name, parameters))
        self._am_call = _Elsewhere(moved)
        moved.add_done_callback(self._am_home)
        return moved

    def _am_home(self, task: asyncio.Task[Any]) -> None:
        """The moved task ended (on its loop): settle this future on its own loop."""
        _on_loop(self.get_loop(), self._am_copy, task)

    def add_done_callback(self, fn: Any, *, context: Any = None) -> None:
        # Every asyncio API that takes it as a future (gather, wait_for, shield, as_completed,
        # run_until_complete) waits for it through this.
        if getattr(self, "_am_lazy", None) is not None and _running_loop() in (None, self.get_loop()):
            self._am_go()  # from another loop, the API using it there says it cannot
        super().add_done_callback(fn, context=context)

    def __await__(self) -> Any:
        moved = self._am_move()
        if moved is not None:
            return moved.__await__()
        self._am_go()
        return super().__await__()

    __iter__ = __await__

    # The coroutine protocol, for a task driving it. Stateless (the future's own state says
    # where it is), so any number of tasks may await it, like ``await`` can.
    def send(self, value: Any) -> Any:
        fut = self._am_move() or self
        if not fut.done():
            self._am_go()
            if not fut.done():
                fut._asyncio_future_blocking = True
                return fut
        raise StopIteration(fut.result())

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        # The task awaiting this gives up on it (cancelled, most often): so does the call.
        self.close()
        if isinstance(typ, BaseException):
            raise typ
        if val is None:
            val = typ()
        elif not isinstance(val, BaseException):
            val = typ(val)
        raise val.with_traceback(tb) if tb is not None else val

    def close(self) -> None:
        moved = getattr(self, "_am_elsewhere", None)
        if moved is not None:  # this future follows the task (on its own loop)
            _on_loop(moved.get_loop(), moved.cancel)
        else:
            self.cancel()


def _on_loop(loop: asyncio.AbstractEventLoop, fn: Any, *args: Any) -> None:
    """Run ``fn`` on ``loop``'s thread: now if this is it, else through the loop (nothing if
    the loop is closed: what it would settle is gone with it)."""
    if _running_loop() is loop:
        fn(*args)
        return
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # closed
        pass


class _Elsewhere:
    """The ``_am_call`` of a future whose call was moved to another loop's task."""

    __slots__ = ("task",)

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task

    def cancel(self) -> None:
        _on_loop(self.task.get_loop(), self.task.cancel)


async def _later(obj: Any, method: str, *args: Any) -> Any:
    """What a method of an MCP client or tool returns when called while no loop runs in the
    thread (``asyncio.run(tool.arun(...))``, ``asyncio.run_coroutine_threadsafe``): a
    coroutine that calls it on the loop that runs the coroutine, as an ``async def`` would.

    Run by something asyncio does not count as a running loop (a forked child going on with
    its parent's coroutine: asyncio ties the running loop to the process that started it),
    it fails as asyncio does, where calling the method again would come back here for ever
    (a RecursionError)."""
    if _running_loop() is None:
        raise RuntimeError("no running event loop")
    return await getattr(obj, method)(*args)
