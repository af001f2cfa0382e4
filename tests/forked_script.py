"""Runs a test's fork scenario in a Python process of its own (forking pytest's own process,
with its threads, would test pytest): the script prints one Python literal per line, for the
child and then the parent."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = str(Path(__file__).resolve().parent)


def run_forked(tmp_path: Path, source: str, timeout: float) -> list[Any]:
    """Writes `source` (formatted with ``tests``, this directory) to a file, runs it, and
    returns the literals it printed."""
    script = tmp_path / "forked.py"
    script.write_text(source.format(tests=TESTS))
    done = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [ast.literal_eval(line) for line in done.stdout.strip().splitlines()]
