"""Tiny benchmark harness: per-call timings with a floor measured in the same run.

Benchmarks are not tests: they print figures and ratios, they never assert.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator

RESULTS: list[dict] = []


@contextlib.contextmanager
def _gc_off() -> Iterator[None]:
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.enable()


def _mean_us(start_ns: int, number: int) -> float:
    return (time.perf_counter_ns() - start_ns) / number / 1000


def per_call_us(fn: Callable[[], object], *, number: int = 20_000, repeat: int = 7) -> float:
    """Best-of-`repeat` mean time of one call, in microseconds (GC off while timing)."""
    for _ in range(min(number, 1000)):
        fn()
    samples = []
    with _gc_off():
        for _ in range(repeat):
            start = time.perf_counter_ns()
            for _ in range(number):
                fn()
            samples.append(_mean_us(start, number))
    return min(samples)


def async_per_call_us(
    call: Callable[[], Awaitable[object]], *, number: int = 20_000, repeat: int = 7
) -> float:
    """Like :func:`per_call_us` for ``await call()``, every call inside one running loop."""

    async def timed() -> float:
        for _ in range(min(number, 1000)):
            await call()
        samples = []
        with _gc_off():
            for _ in range(repeat):
                start = time.perf_counter_ns()
                for _ in range(number):
                    await call()
                samples.append(_mean_us(start, number))
        return min(samples)

    return asyncio.run(timed())


async def awaited_per_call_us(
    call: Callable[[], Awaitable[object]], number: int, *, repeat: int = 5, warmup: int = 50
) -> float:
    """Best-of-`repeat` mean time of ``await call()`` on the running loop, in microseconds
    (for calls bound to a loop already running: a client session, a server connection)."""
    for _ in range(min(number, warmup)):
        await call()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(number):
            await call()
        best = min(best, _mean_us(start, number))
    return best


def once_us(fn: Callable[[], object], *, repeat: int = 7, setup: Callable[[], object] | None = None) -> float:
    """Best-of-`repeat` time of one call to `fn` (after `setup`), in microseconds."""
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return min(samples)


def median_us(fn: Callable[[], object], *, repeat: int = 7) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def report(
    group: str,
    name: str,
    value_us: float,
    *,
    floor_us: float | None = None,
    target_us: float | None = None,
    target_ratio: float | None = None,
    note: str = "",
) -> None:
    """Print one figure: its value, its overhead over the floor and the target it is held to
    (``target_us`` bounds the overhead, ``target_ratio`` the ratio to the floor)."""
    parts = [f"{group:<10} {name:<58} {fmt(value_us):>11}"]
    if floor_us is not None:
        parts.append(
            f"floor {fmt(floor_us)}  overhead {fmt(value_us - floor_us)}  ratio {value_us / floor_us:5.1f}x"
        )
    if target_us is not None:
        # With a floor, the target bounds the overhead over it, and the line says so.
        measured = value_us - floor_us if floor_us is not None else value_us
        label = "overhead target" if floor_us is not None else "target"
        parts.append(f"{label} {fmt(target_us)} [{'ok' if measured <= target_us else 'OVER'}]")
    if target_ratio is not None and floor_us is not None:
        parts.append(
            f"ratio target <= {target_ratio:.1f}x [{'ok' if value_us <= target_ratio * floor_us else 'OVER'}]"
        )
    if note:
        parts.append(note)
    print("  ".join(parts), flush=True)
    RESULTS.append(
        {
            "group": group,
            "name": name,
            "us": value_us,
            "floor_us": floor_us,
            "target_us": target_us,
            "target_ratio": target_ratio,
        }
    )


def fmt(us: float) -> str:
    if abs(us) >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.2f} µs"
