"""Shared by the reliability benches: the tests' workload on the path, a ``--scale`` option and
the one-line report that exits non-zero when a promise is broken."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))  # reliability_workload, reliability_support, proc_table


def scale_arg(about: str) -> float:
    """``--scale F`` multiplies every count and duration (1.0: the sizes promised in issue 27)."""
    parser = argparse.ArgumentParser(description=about)
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply counts and durations (default 1.0)"
    )
    return parser.parse_args().scale


def scaled(n: float, scale: float) -> int:
    return max(1, int(n * scale))


def report(name: str, figures: dict[str, object], broken: list[str]) -> int:
    """Prints ``name: k=v ... [ok]`` (or ``[BROKEN: why]``); returns the exit status."""
    parts = " ".join(f"{k}={v}" for k, v in figures.items())
    verdict = "[ok]" if not broken else f"[BROKEN: {'; '.join(broken)}]"
    print(f"{name}: {parts} {verdict}", flush=True)
    return 1 if broken else 0


def soak_broken(stats: dict[str, float], growth_mb: float, limit_mb: float, what: str) -> list[str]:
    """The soak promises: no wrong ``what`` (results, runs), no unexpected exception, RSS growth
    after warm-up within ``limit_mb``."""
    broken = []
    if stats["wrong"]:
        broken.append(f"{stats['wrong']} wrong {what}")
    if stats["exceptions"]:
        broken.append(f"{stats['exceptions']} unexpected exceptions")
    if growth_mb > limit_mb:
        broken.append(f"RSS grew {growth_mb:.2f} MB > {limit_mb} MB")
    return broken
