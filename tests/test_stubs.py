"""The hand-written stub must match the compiled extension."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO


@pytest.mark.timeout(400)  # stubtest is a cold mypy run: bounded by its own 300 s, not pytest's 120 s
def test_native_stub_matches_the_extension():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy.stubtest",
            "agentmaker._native",
            "--allowlist",
            str(REPO / ".stubtest-allowlist"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_public_names_are_exported():
    import agentmaker

    assert sorted(agentmaker.__all__) == sorted(set(agentmaker.__all__)), "duplicates in __all__"
    for name in agentmaker.__all__:
        assert getattr(agentmaker, name) is not None, name
