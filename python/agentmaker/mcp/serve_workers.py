"""Worker threads that take served calls straight from the Rust server's queue.

A synchronous tool must run off the event loop. Handed over by the loop, a call would cost
four wake-ups between threads (the runtime wakes the loop, the loop a worker, the worker the
loop, the loop the runtime); taken by a worker that waits on the queue itself (without the
GIL), it costs two. A worker runs a call to its end only when nothing in it needs the loop:
a synchronous or non-blocking tool with no confirmation and no timeout (or a call a gate
refused); any other call goes to the loop, as does a cancellation. The loop keeps taking
calls from the same queue too, so async calls never wait behind busy workers.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from agentmaker.mcp.progress import CURRENT

__all__ = ["start_workers"]


def runs_here(rec: Any, host: Any) -> bool:
    """Whether a worker can finish this prepared call without the event loop."""
    if rec.status is not None:  # refused by a gate: only the answer is left
        return True
    return (
        rec._route in ("thread", "inline")
        and not rec._confirm
        and rec._timeout is None
        and not getattr(rec._tool, "_asks_person", False)  # asked on the loop (serve.Host._ask)
        and not host.guarded(rec)
    )


def _work(host: Any, loop: asyncio.AbstractEventLoop) -> None:
    try:
        _serve(host, loop)
    except RuntimeError:  # the loop closed under a hand-over: the server is going away
        pass


def _serve(host: Any, loop: asyncio.AbstractEventLoop) -> None:
    native = host.native
    while (event := native.next_event_blocking()) is not None:
        if event[0] != "call":
            loop.call_soon_threadsafe(host.cancel, event[1])
            continue
        _, call_id, name, arguments, can_elicit, progress = event
        try:
            pipeline, rec = host.prepare(call_id, name, arguments)
            if not runs_here(rec, host):
                loop.call_soon_threadsafe(host.adopt, call_id, name, pipeline, rec, can_elicit, progress)
                continue
            if rec.status is None:
                token = CURRENT.set((native, call_id, loop)) if progress else None
                started = time.perf_counter()
                try:
                    pipeline.run(rec)
                except Exception as exc:  # noqa: BLE001 - the core words it, as for an agent
                    pipeline.fail(rec, exc, time.perf_counter() - started)
                finally:
                    if token is not None:
                        CURRENT.reset(token)
            host.reply(call_id, name, rec)
        except Exception as exc:  # noqa: BLE001 - the server keeps serving; the client reads why
            host.reply_failure(call_id, name, exc)


def start_workers(host: Any, loop: asyncio.AbstractEventLoop, count: int) -> None:
    """Start ``count`` daemon workers; each ends when the server stops."""
    for i in range(count):
        threading.Thread(target=_work, args=(host, loop), name=f"agentmaker-mcp-{i}", daemon=True).start()
