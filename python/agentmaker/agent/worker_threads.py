"""The worker threads that run synchronous tools off the calling thread.

Python cannot stop a running thread, so a sync tool that overruns its timeout keeps running: its
call returns a timeout error at once and the worker is lost until the function returns. With
``concurrent.futures.ThreadPoolExecutor`` such a thread would also block interpreter exit
(its workers are joined at shutdown), so this pool uses daemon threads: a hung tool never keeps
the process alive. Workers are started on demand up to ``max_workers`` and reused.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

# Tools on these threads mostly wait (network, subprocesses, sleeps), so the bound is about
# blocking, not CPUs. A sync tool abandoned after its timeout keeps its worker until it returns.
DEFAULT_WORKERS = 32


class ToolThreads:
    def __init__(self, max_workers: int = DEFAULT_WORKERS, name: str = "agentmaker-tool") -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self.max_workers = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._workers = 0
        self._idle = 0

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        self._queue.put((fut, fn, args))
        with self._lock:
            # Start a worker only when queued jobs outnumber the workers waiting for one.
            if self._queue.qsize() > self._idle and self._workers < self.max_workers:
                self._workers += 1
                threading.Thread(target=self._work, name=f"{self._name}-{self._workers}", daemon=True).start()
        return fut

    def _work(self) -> None:
        q = self._queue
        lock = self._lock
        while True:
            with lock:
                self._idle += 1
            fut, fn, args = q.get()
            with lock:
                self._idle -= 1
            if fut.set_running_or_notify_cancel():
                try:
                    result = fn(*args)
                except BaseException as exc:  # noqa: BLE001 - delivered to the waiter, never lost
                    fut.set_exception(exc)
                else:
                    fut.set_result(result)
            del fut, fn, args


_shared: ToolThreads | None = None
_shared_lock = threading.Lock()


def shared_threads() -> ToolThreads:
    global _shared
    if _shared is None:
        with _shared_lock:
            if _shared is None:
                _shared = ToolThreads()
    return _shared
