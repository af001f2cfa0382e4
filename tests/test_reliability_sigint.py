"""Ctrl-C (SIGINT) while a CLI command runs: the process gets KeyboardInterrupt at once through
every entry point, the command's process group and supervisor are gone, no child process is
left, and the next run works. Each case runs a real script in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_support import BOUND, assert_all_gone, wait_for_sleepers

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "reliability_sigint_script.py"


@pytest.mark.parametrize("mode", ["agent", "agent_timeout", "agent_async", "agent_mcp", "registry", "tool"])
def test_sigint_during_a_command_interrupts_at_once_and_leaves_nothing(mode):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        seen = wait_for_sleepers(1, proc.pid)
        proc.send_signal(signal.SIGINT)
        # The command would take 30 s: an exit within the bound means the interrupt was heeded.
        out, err = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["interrupted"] is True
    assert report["left"] == []
    assert "[exit code 0]\nstdout:\nagain\n" in report["next"], report["next"]
    assert_all_gone(seen, proc.pid)
