"""Run every benchmark scenario (benches/bench_*.py) and print figures with ratios.

Usage: python benches/run.py [name-filter ...]
Build a release extension first (`pip install .` or `maturin develop --release`): debug
builds are an order of magnitude slower and their figures mean nothing.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(argv: list[str]) -> int:
    filters = argv[1:]
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    for name in modules:
        if filters and not any(f in name for f in filters):
            continue
        print(f"# {name}", flush=True)
        importlib.import_module(name).main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
