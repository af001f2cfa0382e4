"""Shared fixtures for the Python tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The shared documents sit beside the clone (../shared), locally and in CI.
SHARED = REPO.parent / "shared"


@pytest.fixture
def repo_root() -> Path:
    return REPO
