"""The release wheel works on a machine with no Rust: installed into a fresh venv (offline, no
build) and running the README's main example.

AGENTMAKER_WHEEL names the wheel: README set-up command 2 and .ci/run build it once (``pip wheel
--no-deps -w .venv/wheel .``), install it with the test extra for the rest of the suite, and
export its path. Without it this test fails, in CI and by hand alike: nothing here could show that a wheel
works without building one, and a skip would hide that (build one as above and set the
variable to run this test alone)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "02_tools_and_registry.py"


def wheel() -> Path:
    named = os.environ.get("AGENTMAKER_WHEEL")
    if not named:
        raise AssertionError(
            "AGENTMAKER_WHEEL is not set: build the release wheel with `pip wheel --no-deps -w dist .` "
            "and set AGENTMAKER_WHEEL to its path (README set-up command 2 and .ci/run do both)"
        )
    path = Path(named)
    assert path.is_file(), f"AGENTMAKER_WHEEL={named} is not a file"
    return path


def without_rust(env: dict[str, str]) -> dict[str, str]:
    """``env`` with no Rust toolchain reachable and nothing pointing into this checkout."""
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d]
    dirs = [d for d in dirs if not any(Path(d, tool).exists() for tool in ("cargo", "rustc", "rustup"))]
    clean = {k: v for k, v in env.items() if not k.startswith(("CARGO", "RUSTUP", "PYTHON", "VIRTUAL_ENV"))}
    clean["PATH"] = os.pathsep.join(dirs)
    return clean


def test_the_release_wheel_installs_without_rust_and_runs_the_main_example(tmp_path):
    whl = wheel()
    # One abi3 wheel serves CPython 3.11 and later.
    assert re.fullmatch(r"agentmaker-[^-]+-cp311-abi3-[a-z0-9_.]+\.whl", whl.name), whl.name
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
    assert any(re.fullmatch(r"agentmaker/_native\.abi3\.so", n) for n in names), names
    assert "agentmaker/py.typed" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    env = without_rust(dict(os.environ))
    for tool in ("cargo", "rustc"):
        assert shutil.which(tool, path=env["PATH"]) is None, tool
    python = str(venv / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(whl)],
        check=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    where = subprocess.run(
        [python, "-c", "import agentmaker; print(agentmaker.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where
    run = subprocess.run(
        [python, str(EXAMPLE)], check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[-2:] == ["calculator said: 35", "The result is 35."], run.stdout
