"""Process isolation for tools: a timeout that really stops the tool.

A synchronous Python function cannot be interrupted from another thread, so an agent that
"times out" a tool running on a thread only stops waiting for it. A tool marked
``@tool(isolate=True)`` (or ``isolate=Isolation(...)``, or a ``Tool`` subclass with the class
attribute ``isolate``, or every function tool of a run with ``RunPolicy(isolate=...)``) runs in
a worker process instead. When its call times out or the run is cancelled, the worker's whole
process group gets SIGTERM, then SIGKILL after ``grace_seconds``, and a fresh worker takes its
place. Limits on memory, CPU seconds and open files are set in the worker (by the Rust core,
with ``setrlimit``) before any tool runs; crossing one gives an error result naming the limit.

Workers are started by the standard library's fork server (``multiprocessing`` "forkserver"
context): a small process started clean, which forks each worker, so starting a worker never
forks the host process with its live threads. Arguments and results cross as JSON, converted
exactly as in-process results are. The tool reaches the worker by reference: an ``@tool``
function must be defined at module level of an importable module (a script's functions work when
its entry point is guarded by ``if __name__ == "__main__":``); a ``Tool`` subclass must be
importable and constructible without arguments, or picklable. A worker imports the main script
again, so a script that calls isolated tools from unguarded top-level code gets, at the first
call, an error result naming the line and the fix (the guard) instead of a worker that runs
the script a second time.

Costs: a round trip of a trivial call to a warm worker is about 0.15-0.2 ms
(``benches/bench_isolation.py``); a worker costs a process (about 20-30 MB) while it lives; a
worker replaced after a timeout or crash takes some tens of milliseconds to start.
"""

from __future__ import annotations

import ast
import asyncio
import atexit
import contextlib
import errno
import inspect
import json
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import tokenize
from typing import Any

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
import agentmaker.errors as errors  # noqa: PLR0402 - the module, not a name of the package
from agentmaker.errors import AgentRunFlow, ToolConfigError
from agentmaker.isolation.settings import DEFAULT, Isolation, setting

__all__ = ["call_async", "call_sync", "warm_up"]


# ------------------------------------------------------------------------------- the reference


def _recipe(tool: Any) -> bytes:
    """How a worker rebuilds ``tool``: as the tool says (an ``@tool`` function: by its module and
    qualified name), or by pickling it, or by its class."""
    own = getattr(tool, "_worker_recipe", None)
    if own is not None:
        return pickle.dumps(own())
    cls = type(tool)
    with contextlib.suppress(Exception):  # most tools are not picklable; then try the class
        return pickle.dumps((_as_is, (tool,)))
    required = [
        p
        for p in inspect.signature(cls).parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if "<locals>" in cls.__qualname__ or required:
        raise ToolConfigError(
            f"tool '{tool.name}' is isolated, but a worker process cannot rebuild it: its class "
            f"{cls.__qualname__} must be importable and constructible without arguments, or picklable"
        )
    return pickle.dumps((_by_class, (cls, tool.name)))


def _as_is(tool: Any) -> Any:
    return tool


def _by_class(cls: type, name: str) -> Any:
    tool = cls()
    if tool.name != name:
        tool.name = name
    return tool


# ----------------------------------------------------------------------------------- the worker


def _worker_main(conn: Any, memory_mb: int | None, open_files: int | None, cpu_seconds: float | None) -> None:
    """A worker's life: its own process group and limits, then messages until the pipe closes
    (the host ended or dropped it). A message is ``+<id>\n<recipe>`` (how to rebuild a tool;
    no answer) or ``<id>\n<arguments as JSON>`` (a call; the answer is JSON)."""
    _native._enter_worker(memory_mb, open_files)
    _drop_host_pipes()
    tools: dict[bytes, tuple[Any, str]] = {}
    recipes: dict[bytes, bytes] = {}
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            os._exit(0)
        key, _, body = message.partition(b"\n")
        if key[:1] == b"+":
            recipes[key[1:]] = body
            continue
        try:
            entry = tools.get(key)
            if entry is None:
                build, args = pickle.loads(recipes[key])
                # The host's registry already applied its name rule; the worker keeps any name.
                reg = _native.ToolRegistry(names="catalog")
                reg.register(build(*args))
                entry = tools[key] = (reg, reg.names()[0])
            reg, name = entry
            if cpu_seconds is not None:
                _native._limit_cpu(cpu_seconds)
            resp = reg.execute_tool(name, json.loads(body))
            try:
                data = json.dumps(resp.data) if resp.data is not None else None
            except (TypeError, ValueError):
                data = None
            answer: dict[str, Any] = {"text": resp.text, "status": resp.status, "data": data}
        except MemoryError:
            answer = {"limit": "memory"}
        except AgentRunFlow as exc:
            answer = {"flow": type(exc).__name__, "message": getattr(exc, "message", str(exc))}
        except OSError as exc:
            answer = (
                {"limit": "files"} if exc.errno == errno.EMFILE else {"error": f"{type(exc).__name__}: {exc}"}
            )
        except Exception as exc:  # noqa: BLE001 - rebuilding the tool failed: say so
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        conn.send_bytes(json.dumps(answer).encode())


def _drop_host_pipes() -> None:
    """A forked worker inherits the write ends of two pipes the fork server and the resource
    tracker watch to learn that the host ended (``multiprocessing`` keeps them for children that
    start processes of their own, which a worker never does). Held here, they would keep both
    alive after the host died, and with the fork server alive, the worker's parent-death signal
    would never come."""
    # A module the host never imported holds no pipe (the "spawn" start method).
    forkserver = sys.modules.get("multiprocessing.forkserver")
    resource_tracker = sys.modules.get("multiprocessing.resource_tracker")
    for holder, attr in (
        (getattr(forkserver, "_forkserver", None), "_forkserver_alive_fd"),
        (getattr(resource_tracker, "_resource_tracker", None), "_fd"),
    ):
        fd = getattr(holder, attr, None)
        if isinstance(fd, int):
            with contextlib.suppress(OSError):
                os.close(fd)
            setattr(holder, attr, None)


# ------------------------------------------------------------------- the main script's guard

# The exit status of a worker that found itself re-running the main script's unguarded code.
_RERUN_EXIT = 86


class _MainRerun(Exception):
    """Starting a worker would run the main script's top-level code again: ``place`` is where."""

    def __init__(self, place: str) -> None:
        super().__init__(place)
        self.place = place


def _check_main_guard() -> None:
    """Raises :class:`_MainRerun` when this call comes from the main script's top-level code
    outside ``if __name__ == "__main__":``. A worker started by the fork server (or spawned)
    imports the main script again before it runs anything, so that code (this very call
    included) would run again in the worker: multiprocessing then fails with its long
    "bootstrapping phase" error, after running the script's side effects twice. In a worker
    that is re-running such code, the worker leaves at once with ``_RERUN_EXIT``."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        os._exit(_RERUN_EXIT)  # the host says why
    main = sys.modules.get("__main__")
    spec = getattr(getattr(main, "__spec__", None), "name", None) or ""
    # multiprocessing leaves alone a main with no file (-c, a REPL, a notebook) and a package's
    # __main__; anything else a worker runs again.
    if main is None or not getattr(main, "__file__", None) or spec.endswith("__main__"):
        return
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>" and frame.f_globals is main.__dict__):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:  # not called from the script's top level (another thread: the worker tells)
        return
    path = frame.f_code.co_filename
    if not os.path.isfile(path) or _guarded(path, frame.f_lineno):
        return
    raise _MainRerun(f"line {frame.f_lineno} of {path}")


_guards: dict[str, list[tuple[int, int]]] = {}


def _guarded(path: str, line: int) -> bool:
    """Whether ``line`` of the script at ``path`` is inside an ``if __name__ == "__main__":``
    block (a script that cannot be read or parsed is given the benefit of the doubt)."""
    spans = _guards.get(path)
    if spans is None:
        try:
            with tokenize.open(path) as f:
                tree = ast.parse(f.read(), path)
        except (OSError, SyntaxError, ValueError):
            return True
        spans = _guards[path] = [
            (node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and _is_main_test(node.test)
        ]
    return any(start <= line <= end for start, end in spans)


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(test.left), ast.dump(test.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}


# ------------------------------------------------------------------------------------ the pool


class _Worker:
    __slots__ = ("conn", "known", "proc")

    def __init__(self, proc: Any, conn: Any) -> None:
        self.proc = proc
        self.conn = conn
        self.known: set[bytes] = set()  # the recipes this worker has been sent

    def send(self, call: tuple[bytes, bytes, bytes]) -> None:
        key, recipe, arguments = call
        if key not in self.known:
            self.conn.send_bytes(b"+" + key + b"\n" + recipe)
            self.known.add(key)
        self.conn.send_bytes(key + b"\n" + arguments)


class _Pool:
    """The workers of one ``Isolation``."""

    def __init__(self, iso: Isolation) -> None:
        self.iso = iso
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._started = False

    def _spawn(self) -> _Worker:
        _check_main_guard()
        ctx = _context()
        parent, child = ctx.Pipe()
        proc = ctx.Process(
            target=_worker_main,
            args=(child, self.iso.memory_mb, self.iso.open_files, self.iso.cpu_seconds),
            daemon=True,
            name="agentmaker-isolated",
        )
        proc.start()
        child.close()
        return _Worker(proc, parent)

    def take(self) -> _Worker:
        with self._lock:
            if not self._started:
                self._started = True
                for _ in range(max(self.iso.warm - 1, 0)):
                    self._idle.append(self._spawn())
            while self._idle:
                w = self._idle.pop()
                if not w.conn.poll(0):  # an idle worker's pipe is readable only once it died
                    return w
                w.conn.close()
                w.proc.join(0)
        return self._spawn()

    def give(self, w: _Worker) -> None:
        with self._lock:
            if len(self._idle) < max(self.iso.workers, 1):
                self._idle.append(w)
                return
        _retire(w)

    def stop(self, w: _Worker) -> None:
        """SIGTERM to the worker's process group, SIGKILL after the grace period, then reap.
        Runs on a thread of its own so that no caller waits for the grace period."""
        _signal_group(w.proc.pid, signal.SIGTERM)
        threading.Thread(target=self._finish_stop, args=(w,), daemon=True).start()

    def _finish_stop(self, w: _Worker) -> None:
        w.proc.join(self.iso.grace_seconds)
        _signal_group(w.proc.pid, signal.SIGKILL)  # the worker, and whatever it started
        w.proc.join()
        w.conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for w in idle:
            _retire(w)


def _retire(w: _Worker) -> None:
    w.conn.close()  # the worker reads EOF and exits
    _signal_group(w.proc.pid, signal.SIGKILL)
    w.proc.join(5)


def _signal_group(pid: int | None, sig: int) -> None:
    if pid is None:
        return
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_pools: dict[Isolation, _Pool] = {}
_pools_lock = threading.Lock()
_ctx: Any = None


def _context() -> Any:
    global _ctx
    if _ctx is None:
        methods = multiprocessing.get_all_start_methods()
        _ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if _ctx.get_start_method() == "forkserver":
            _ctx.set_forkserver_preload(["agentmaker"])
    return _ctx


def _pool(isolation: Any) -> _Pool:
    iso = DEFAULT if isolation is True else isolation
    pool = _pools.get(iso)
    if pool is None:
        with _pools_lock:
            pool = _pools.setdefault(iso, _Pool(iso))
    return pool


@atexit.register
def _close_pools() -> None:
    for pool in list(_pools.values()):
        pool.close()


def warm_up(isolation: Isolation | bool = True) -> None:
    """Starts the fork server and ``isolation.warm`` workers now, so that the first isolated
    call does not wait for them (a few hundred milliseconds)."""
    iso = setting(isolation, "warm_up()")
    if not iso:
        return
    pool = _pool(iso)
    try:
        w = pool.take()  # starts the pool's warm workers beside this one
    except _MainRerun as exc:
        raise ToolConfigError(
            f"warm_up() is called from the main script's top-level code ({exc.place}), which every "
            'worker process would run again; put that code under if __name__ == "__main__":'
        ) from None
    pool.give(w)


# ------------------------------------------------------------------------------------ one call


_recipe_keys: dict[bytes, bytes] = {}


def _message(tool: Any, parameters: dict[str, Any]) -> tuple[bytes, bytes, bytes]:
    """The call for a worker: the tool's key and recipe (made once per tool), and the arguments."""
    made = getattr(tool, "_isolation_recipe", None)
    if made is None:
        recipe = _recipe(tool)
        key = _recipe_keys.setdefault(recipe, str(len(_recipe_keys)).encode())
        made = (key, recipe)
        try:
            tool._isolation_recipe = made  # kept on the tool
        except AttributeError:
            pass
    return made[0], made[1], json.dumps(parameters).encode()


def _answer(tool: Any, raw: bytes | None, w: _Worker, pool: _Pool) -> Any:
    """The worker's answer as the call's ToolResponse (the worker goes back to the pool), or the
    error for a worker that died or crossed a limit (the worker is stopped)."""
    name = tool.name
    iso = pool.iso
    if raw is None:  # the pipe closed: the worker died
        w.proc.join(1)
        code = w.proc.exitcode
        pool.stop(w)
        if code == -signal.SIGXCPU:
            return _native._isolation_text(name, "cpu", float(iso.cpu_seconds or 0))
        if code == _RERUN_EXIT:
            main = getattr(sys.modules.get("__main__"), "__file__", None) or "the main script"
            return _native._isolation_text(name, "unguarded", main)
        return _native._isolation_text(name, "crash", _exit_description(code))
    answer = json.loads(raw)
    limit = answer.get("limit")
    if limit is not None:
        pool.stop(w)
        value = float(iso.memory_mb or 0) if limit == "memory" else float(iso.open_files or 0)
        return _native._isolation_text(name, limit, value)
    pool.give(w)
    if "flow" in answer:
        raise getattr(errors, answer["flow"])(answer["message"])
    if "error" in answer:
        return _native._isolation_text(name, "setup", answer["error"])
    data = json.loads(answer["data"]) if answer["data"] is not None else None
    return _native.ToolResponse(answer["text"], answer["status"], data)


def _exit_description(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _start(tool: Any, parameters: dict[str, Any], isolation: Any) -> Any:
    """Sends one call to a worker: ``(pool, worker)``, or the error result when the tool cannot
    be sent to a worker (or the worker died before it took the call)."""
    pool = _pool(isolation)
    try:
        message = _message(tool, parameters)
    except ToolConfigError as exc:
        return _native._isolation_text(tool.name, "setup", str(exc))
    try:
        w = pool.take()
    except _MainRerun as exc:
        return _native._isolation_text(tool.name, "unguarded", exc.place)
    try:
        w.send(message)
    except OSError:
        return _answer(tool, None, w, pool)
    return pool, w


def _receive(w: _Worker) -> bytes | None:
    """The worker's answer, or None when its pipe closed (it died)."""
    try:
        return bytes(w.conn.recv_bytes())
    except (EOFError, OSError):
        return None


def call_sync(tool: Any, parameters: dict[str, Any], isolation: Any, timeout: float | None) -> Any:
    """Runs one call in a worker and waits for it (at most ``timeout`` seconds)."""
    started = _start(tool, parameters, isolation)
    if not isinstance(started, tuple):
        return started
    pool, w = started
    try:
        if not w.conn.poll(timeout):
            pool.stop(w)
            return _native._isolation_text(tool.name, "timeout", float(timeout or 0))
        raw = _receive(w)
    except BaseException:  # KeyboardInterrupt while waiting: the call is stopped with the wait
        pool.stop(w)
        raise
    return _answer(tool, raw, w, pool)


async def call_async(tool: Any, parameters: dict[str, Any], isolation: Any) -> Any:
    """Runs one call in a worker, waiting on the event loop (no thread). Cancelling the task
    that awaits it stops the worker."""
    started = _start(tool, parameters, isolation)
    if not isinstance(started, tuple):
        return started
    pool, w = started
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    fd = w.conn.fileno()

    def wake() -> None:  # the pipe may stay readable until the loop removes the reader
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        raw = _receive(w)
    except BaseException:  # cancelled (a timeout, the run): the tool is stopped, not abandoned
        pool.stop(w)
        raise
    return _answer(tool, raw, w, pool)
