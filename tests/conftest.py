"""Shared fixtures for the Python tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The repository's root. Tests read nothing outside it: CI runs them from a clone with nothing
#: beside it.
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A 127.0.0.1 port where every connection is refused, for as long as the test runs.

    The port stays bound (never listening) to a socket held here: a port bound, read and closed
    again is free, and any process on the machine (a server another test starts, an outgoing
    connection) may take it before the test connects.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def mcp1_path() -> Path:
    """Where the official MCP SDK 1.x is installed, apart from the 2.x in the test environment.

    The README's test command puts it at ``$VIRTUAL_ENV/mcp1`` (``pip install --target``);
    ``AGENTMAKER_MCP1_PATH`` points elsewhere. Servers started with it on ``PYTHONPATH`` import
    1.x (``FastMCP``) while the test process keeps 2.x.
    """
    import os
    import sys

    return Path(os.environ.get("AGENTMAKER_MCP1_PATH") or Path(sys.prefix) / "mcp1")


@pytest.fixture(scope="session", params=[2, 1], ids=["sdk2", "sdk1"])
def sdk_major(request) -> int:
    """Runs a test once against each major version of the official Python MCP SDK."""
    if request.param == 1 and not (mcp1_path() / "mcp" / "server" / "fastmcp").is_dir():
        pytest.fail(
            f"MCP SDK 1.x is not installed at {mcp1_path()}: run "
            f"`pip install --target {mcp1_path()} 'mcp>=1.10,<2'` (the README's test command does)"
        )
    return request.param


@pytest.fixture(scope="session")
def sdk_env(sdk_major) -> dict[str, str]:
    """Environment additions for an SDK server process of ``sdk_major``."""
    return {"PYTHONPATH": str(mcp1_path())} if sdk_major == 1 else {}


@pytest.fixture(scope="module")
def http_server():
    """The SDK server over streamable HTTP, one per test module that asks for it."""
    from mcp_support import sdk_http_server

    with sdk_http_server() as url:
        yield url
