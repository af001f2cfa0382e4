"""The mixed tool-call workload of the reliability checks (tests and benches/reliability).

Every call ``i`` carries ``i`` in its arguments, and :func:`check` knows the exact response that
call must get, so a result delivered to the wrong call, a lost error or a truncated result is
counted as wrong. The kinds: a valid call, invalid arguments, an unknown tool, a raising tool,
a large (200 kB) result, and on the async path an ``async def`` tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import faulthandler
import gc
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from agentmaker import CalculatorTool, ToolRegistry, ToolResponse, tool

LARGE = 200_000
SYNC_KINDS = ("valid", "invalid", "unknown", "raising", "large", "calculator")
ASYNC_KINDS = (*SYNC_KINDS, "async")


@tool
def echo(text: str, n: int) -> str:
    """Return the text and the number."""
    return f"{text}:{n}"


@tool
def boom(n: int) -> str:
    """Always raises."""
    raise ValueError(f"boom {n}")


@tool
def big(n: int) -> str:
    """A large result."""
    return "x" * LARGE + str(n)


@tool
async def aecho(text: str, n: int) -> str:
    """Async echo."""
    await asyncio.sleep(0)
    return f"{text}:{n}"


def mixed_registry() -> ToolRegistry:
    reg = ToolRegistry()
    for t in (echo, boom, big, aecho, CalculatorTool()):
        reg.register(t)
    return reg


def call_for(i: int, kinds: tuple[str, ...] = SYNC_KINDS) -> tuple[str, str, dict[str, Any]]:
    """``(kind, tool name, arguments)`` of call ``i``."""
    kind = kinds[i % len(kinds)]
    if kind == "valid":
        return kind, "echo", {"text": f"c{i}", "n": i}
    if kind == "invalid":
        return kind, "echo", {"text": f"c{i}", "n": f"x{i}"}
    if kind == "unknown":
        return kind, f"nope{i}", {"n": i}
    if kind == "raising":
        return kind, "boom", {"n": i}
    if kind == "large":
        return kind, "big", {"n": i}
    if kind == "calculator":
        return kind, "calculator", {"expression": f"{i} * 2 + 1"}
    return kind, "aecho", {"text": f"a{i}", "n": i}


def check(i: int, kind: str, resp: Any) -> bool:
    """Whether ``resp`` is exactly the response call ``i`` of ``kind`` must get."""
    if type(resp) is not ToolResponse:
        return False
    text, status = resp.text, resp.status
    if kind == "valid":
        return status == "success" and text == f"c{i}:{i}"
    if kind == "invalid":
        return status == "error" and f'"x{i}" is not of type "integer"' in text
    if kind == "unknown":
        return status == "error" and text.startswith(f"Error: tool 'nope{i}' does not exist.")
    if kind == "raising":
        return (
            status == "error" and text == f"Error: tool 'boom' raised during execution: ValueError: boom {i}"
        )
    if kind == "large":
        return status == "success" and len(text) == LARGE + len(str(i)) and text.endswith(str(i))
    if kind == "calculator":
        return status == "success" and text == str(i * 2 + 1)
    return status == "success" and text == f"a{i}:{i}"


def rss_mb() -> float:
    """Resident set size of this process, in MB, after a garbage collection and after handing
    free heap pages back to the system (``malloc_trim``): what is left is memory in use, not
    memory the allocator keeps for later (which earlier tests in the same process leave behind
    in varying amounts)."""
    gc.collect()
    _malloc_trim()
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def _malloc_trim() -> None:
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


@contextlib.contextmanager
def quiet_tool_errors() -> Iterator[None]:
    """The raising tool logs every call: keep the log (and its capture) out of a memory check
    and the test output while this is active; the level is restored after."""
    log = logging.getLogger("agentmaker.tools")
    old = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(old)


def run_sync(reg: ToolRegistry, start: int, count: int) -> int:
    """``count`` sync calls from ``start``; returns how many got a wrong response."""
    wrong = 0
    for i in range(start, start + count):
        kind, name, args = call_for(i)
        if not check(i, kind, reg.execute_tool(name, args)):
            wrong += 1
    return wrong


async def run_async(reg: ToolRegistry, start: int, count: int, width: int = 100) -> int:
    """``count`` async calls from ``start``, ``width`` at a time; returns the wrong ones."""
    wrong = 0
    for base in range(start, start + count, width):
        ids = range(base, min(base + width, start + count))
        planned = [call_for(i, ASYNC_KINDS) for i in ids]
        got = await asyncio.gather(*(reg.aexecute_tool(name, args) for _, name, args in planned))
        wrong += sum(not check(i, kind, r) for i, (kind, _, _), r in zip(ids, planned, got, strict=True))
    return wrong


#: The status an agent's record of each kind of call must have.
AGENT_STATUS = {
    "valid": "success",
    "invalid": "invalid",
    "unknown": "unknown_tool",
    "raising": "error",
    "large": "success",
    "calculator": "success",
    "async": "success",
}


class LoopingLLM:
    """A scripted model for any number of runs: asked with the user's input ``"run N"``, it calls
    one tool of every kind (arguments numbered from ``N * 10``), then answers ``"done N"``."""

    def __init__(self, kinds: tuple[str, ...] = SYNC_KINDS) -> None:
        self.kinds = kinds

    def chat(self, messages: list, *, tools: list | None = None, **kwargs: Any) -> Any:
        from agentmaker import LLMResponse

        n = int(messages[1]["content"].split()[1]) if messages[0]["role"] == "system" else 0
        if messages[-1]["role"] == "tool":
            return LLMResponse(content=f"done {n}", model="loop", finish_reason="stop")
        calls = []
        for j in range(len(self.kinds)):
            _, name, args = call_for(n * 10 + j, self.kinds)
            calls.append(
                {"id": f"c{j}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            )
        return LLMResponse(content="", model="loop", finish_reason="tool_calls", tool_calls=calls)

    async def achat(self, messages: list, *, tools: list | None = None, **kwargs: Any) -> Any:
        return self.chat(messages, tools=tools, **kwargs)


def check_run(n: int, result: Any, kinds: tuple[str, ...] = SYNC_KINDS) -> bool:
    """Whether agent run ``n`` of :class:`LoopingLLM` ended right, each call with its status."""
    if result.final_output != f"done {n}" or len(result.tool_calls) != len(kinds):
        return False
    for j, rec in enumerate(result.tool_calls):
        kind, name, args = call_for(n * 10 + j, kinds)
        if rec.name != name or rec.arguments != args or rec.status != AGENT_STATUS[kind]:
            return False
        if kind == "valid" and rec.output != f"{args['text']}:{args['n']}":
            return False
    return True


class Churn:
    """Threads calling a registry while another thread registers, overwrites and unregisters
    temporary tools ``tmp<k>``. Callers also call the current temporary tool, which may be gone:
    its answer must then be "does not exist", never another tool's result."""

    def __init__(self, reg: ToolRegistry) -> None:
        self.reg = reg
        self.done = threading.Event()
        self.wrong: list[str] = []
        self.errors: list[BaseException] = []
        self.mutations = 0
        self.calls = 0

    def caller(self, t: int, count: int | None) -> None:
        """``count`` rounds (or until :attr:`done` is set) of two calls each."""
        reg = self.reg
        j = 0
        try:
            while (j < count) if count is not None else not self.done.is_set():
                i = t * 100_000_000 + j
                kind, name, args = call_for(i)
                if not check(i, kind, reg.execute_tool(name, args)):
                    self.wrong.append(f"call {i} ({kind})")
                k = self.mutations
                resp = reg.execute_tool(f"tmp{k}", {"n": k})
                ok = (
                    resp.text == f"tmp{k}:{k}"
                    if resp.status == "success"
                    else resp.text.startswith(f"Error: tool 'tmp{k}' does not exist.")
                )
                if not ok:
                    self.wrong.append(f"tmp{k}: {resp.text[:80]}")
                if j % 100 == 0:
                    reg.to_openai_schema()
                j += 1
                self.calls += 2
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            self.errors.append(exc)

    def mutator(self) -> None:
        reg = self.reg
        try:
            k = 0
            while not self.done.is_set():
                k += 1

                def temp(n: int, k: int = k) -> str:
                    """A tool that lives for a moment."""
                    return f"tmp{k}:{n}"

                reg.register_callable(temp, name=f"tmp{k}")
                self.mutations = k
                if k % 2:
                    reg.unregister(f"tmp{k}")
                reg.register_callable(temp, name=f"tmp{k}", overwrite=True)
                reg.unregister(f"tmp{k}")
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            self.errors.append(exc)


def watched(threads: list[threading.Thread], bound: float) -> list[str]:
    """Starts (if needed) and joins ``threads``; returns the names of those still running after
    ``bound`` seconds, having dumped every thread's stack to stderr."""
    for t in threads:
        if t.ident is None:
            t.start()
    deadline = time.monotonic() + bound
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    if stuck:
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    return stuck
