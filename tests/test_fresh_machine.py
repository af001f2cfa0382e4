"""What a fresh machine needs is stated and true: the oldest Rust the locked tree builds with
(``rust-version``), how long the source build takes and how to watch it, the programs the tests
need, and a release workflow for wheels that need no Rust."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib

import yaml
from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_rust_version_is_the_oldest_the_locked_dependencies_accept():
    declared = tomllib.loads((REPO / "Cargo.toml").read_text(encoding="utf-8"))["package"]["rust-version"]
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked", "--offline"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
    )
    needed = max(
        (version(p["rust_version"]), p["name"])
        for p in meta["packages"]
        if p.get("rust_version") and p["source"] is not None
    )
    assert version(declared) == needed[0][: len(version(declared))], (declared, needed)
    # The README says the same.
    assert f"Rust {declared} or later" in README


def test_the_readme_says_how_long_the_source_build_takes_and_how_to_watch_it():
    assert "5-12 minutes on 2 cores" in README
    assert "`pip install -v .`" in README


def test_set_up_command_2_installs_the_programs_the_tests_need():
    (command,) = [line for line in README.splitlines() if "python -m pytest" in line]
    assert "bash scripts/install_test_programs.sh" in command
    script = (REPO / "scripts" / "install_test_programs.sh").read_text(encoding="utf-8")
    # nginx has no Python package: Debian's nginx-light, as the load-balancing test needs.
    assert "nginx-light" in script
    assert "install_test_programs.sh" in (REPO / "tests" / "test_mcp_serve_stateless.py").read_text(
        encoding="utf-8"
    )
    syntax = subprocess.run(["bash", "-n", str(REPO / "scripts" / "install_test_programs.sh")], check=False)
    assert syntax.returncode == 0


def test_the_release_workflow_builds_abi3_wheels_and_an_sdist_and_no_windows():
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    jobs = flow["jobs"]
    assert set(jobs) == {"linux", "macos", "sdist", "release"}
    targets = {
        job: {p["target"] for p in jobs[job]["strategy"]["matrix"]["platform"]} for job in ("linux", "macos")
    }
    assert targets == {"linux": {"x86_64", "aarch64"}, "macos": {"x86_64", "aarch64"}}
    builds = [
        s
        for job in ("linux", "macos", "sdist")
        for s in jobs[job]["steps"]
        if "maturin-action" in s.get("uses", "")
    ]
    assert [b["with"].get("command", "build") for b in builds] == ["build", "build", "sdist"]
    assert all("--release" in b["with"]["args"] for b in builds[:2])
    assert jobs["release"]["needs"] == ["linux", "macos", "sdist"]
    assert not re.search(r"windows", json.dumps(flow), re.IGNORECASE)
    # abi3: one wheel per platform for every CPython from 3.11.
    cargo = (REPO / "Cargo.toml").read_text(encoding="utf-8")
    assert re.search(r'^pyo3 = .*"abi3-py311"', cargo, re.MULTILINE)
