#!/usr/bin/env bash
# The programs the tests need that no Python package ships, installed from Debian's packages
# when they are missing (as root, or through sudo):
#   python3-venv  `python3 -m venv` (Debian splits ensurepip out of python3)
#   nginx-light   tests/test_mcp_serve_stateless.py balances two MCP servers behind a real nginx
# Everything else the tests run comes from the test extra (pyproject.toml). Run by README
# set-up command 2 and by .ci/run.
set -euo pipefail

missing=()
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
if ! [ -x /usr/sbin/nginx ] && ! command -v nginx >/dev/null; then
    missing+=(nginx-light)
fi
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install these first (no apt-get here to do it): ${missing[*]}" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO=sudo
fi
echo "[setup] apt-get install ${missing[*]}"
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q "${missing[@]}" >/dev/null
