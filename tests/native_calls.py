"""Counting how often Python enters the Rust core: every call of a function or method of an
``agentmaker._native`` object, seen through the interpreter's profile hook on this thread and on
threads started meanwhile (the tool workers; a worker started earlier is not seen).
(Attribute reads of native objects do not count; the call pipeline's records are Python
objects, so the hot path reads none.) Shared by tests/test_call_crossings.py and
benches/bench_crossings.py."""

from __future__ import annotations

import collections
import sys
import threading
from collections.abc import Callable
from typing import Any

import agentmaker._native as native

NATIVE_TYPES = tuple(v for v in vars(native).values() if isinstance(v, type))


def native_calls(fn: Callable[[], Any]) -> collections.Counter[str]:
    """Run ``fn`` and count the native calls it made, by qualified name."""
    seen: collections.Counter[str] = collections.Counter()
    active = True

    def profile(frame: Any, event: str, arg: Any) -> None:
        if not active:  # a worker thread that outlives the count removes its own hook
            sys.setprofile(None)
            return
        if event != "c_call":
            return
        owner = getattr(arg, "__self__", None)
        if isinstance(owner, NATIVE_TYPES) or getattr(arg, "__module__", None) == "agentmaker._native":
            seen[getattr(arg, "__qualname__", repr(arg))] += 1

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type] # None removes the hook
        active = False
    return seen
