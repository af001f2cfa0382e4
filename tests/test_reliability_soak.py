"""A short soak: 25,000 mixed calls (valid, invalid arguments, unknown tool, raising tool,
large result, calculator, async tool) and 1,000 agent runs get exactly their own responses and
do not grow the memory of the process running them. Each runs in a fresh process
(reliability_soak_script.py). benches/reliability/soak_*.py run the long versions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

#: RSS growth allowed after warm-up. The calls allocate and free megabytes each (200 kB
#: results): a leak of even one small object per call over 25,000 calls exceeds it.
GROWTH_MB = 2.0


def soak(mode: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [env.get("PYTHONPATH")])])
    script = str(HERE / "reliability_soak_script.py")
    done = subprocess.run(
        [sys.executable, script, mode], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", ["calls", "agent"])
def test_every_result_is_right_and_memory_stays_flat(mode):
    report = soak(mode)
    assert report["wrong"] == 0
    assert report["growth_mb"] <= GROWTH_MB, f"RSS grew by {report['growth_mb']:.2f} MB"
