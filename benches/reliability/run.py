"""Run the reliability benches (soak, concurrency, cancellation, fuzzing), one line each.

Usage: python benches/reliability/run.py [--scale F] [name-filter ...]
``--scale 1`` (the default) runs the sizes promised in issue 27: about 10 minutes on a 2-core
machine with a release build; ``--scale 0.1`` is a quick pass. Exits non-zero when any bench
reports a broken promise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = ["soak_calls", "soak_agent", "concurrency", "cancellation", "fuzz"]


def main(argv: list[str]) -> int:
    scale = "1"
    if "--scale" in argv:
        at = argv.index("--scale")
        scale = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    filters = argv[1:]
    failed = []
    for name in BENCHES:
        if filters and not any(f in name for f in filters):
            continue
        code = subprocess.call([sys.executable, str(HERE / f"{name}.py"), "--scale", scale])
        if code:
            failed.append(name)
    if failed:
        print(f"broken promises in: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
