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

#: RSS growth allowed after warm-up (identical runs read within 0.1 MB): a leak of one small
#: object (40 bytes) per call over 25,000 calls exceeds it.
GROWTH_MB = 1.0

# Each soak is a fresh process bounded by its own 300 s (a hang stops there); on a busy machine
# a working run takes longer than pytest's default 120 s, which would stop it first.
pytestmark = pytest.mark.timeout(400)


def soak(mode: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [env.get("PYTHONPATH")])])
    # glibc raises its mmap threshold after large blocks are freed and then serves them from
    # the heap, whose fragmentation moved RSS by +-4 MB between identical runs; a fixed
    # threshold and two arenas make the reading repeat within 0.1 MB, so a leak stands out.
    env["MALLOC_MMAP_THRESHOLD_"] = "65536"
    env["MALLOC_ARENA_MAX"] = "2"
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
