"""The 2026-07-28 `input_required` rounds of a served confirmation, on the wire, against a
hostile client: the server (a real subprocess on stdio) keeps nothing between rounds, so every
retry's `requestState` must prove it was issued by this server process for this tool with these
arguments."""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from test_mcp_serve import serve_args, server_env
from test_mcp_serve_stdio_kinds import JsonLines

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}
YES = {"confirm": {"action": "accept", "content": {"approve": True}}}
REFUSED = (
    "the requestState of this retry is refused: it was not issued by this server process for "
    "this tool with these arguments (forged, altered, from another server process, or the "
    "arguments changed). Call the tool again without inputResponses and requestState to be "
    "asked anew."
)


class Server:
    """A served registry in a subprocess, spoken to in 2026-07-28 requests."""

    def __init__(self, lines: JsonLines) -> None:
        self.lines = lines
        self.next_id = 0

    def call(self, name: str, arguments: dict[str, Any], **retry: Any) -> dict[str, Any]:
        self.next_id += 1
        params = {"name": name, "arguments": arguments, "_meta": META, **retry}
        self.lines.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params})
        while (answer := self.lines.receive()).get("id") != self.next_id:
            pass
        return answer


@contextlib.contextmanager
def server() -> Iterator[Server]:
    proc = subprocess.Popen(
        [sys.executable, *serve_args("mcp_servers.served_tools:gated")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=server_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        yield Server(JsonLines(proc.stdout.fileno(), proc.stdin.fileno()))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


def asked(answer: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The requestState and the question of an input_required answer."""
    result = answer["result"]
    assert result["resultType"] == "input_required"
    assert set(result["inputRequests"]) == {"confirm"}
    return result["requestState"], result["inputRequests"]["confirm"]


def test_the_first_round_asks_and_runs_nothing(tmp_path):
    target = tmp_path / "made"
    with server() as srv:
        state, question = asked(srv.call("touch", {"path": str(target)}))
    assert question == {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f'Allow the tool \'touch\' to run with {{"path": "{target}"}}?',
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "approve": {"type": "boolean", "title": "Approve", "description": "Run this tool call"}
                },
                "required": ["approve"],
            },
        },
    }
    assert isinstance(state, str) and state
    assert not target.exists()


def test_the_answer_decides(tmp_path):
    target = tmp_path / "made"
    args = {"path": str(target)}
    with server() as srv:
        state, _ = asked(srv.call("touch", args))
        declined = srv.call(
            "touch", args, inputResponses={"confirm": {"action": "decline"}}, requestState=state
        )["result"]
        assert declined["isError"] is True
        assert (
            declined["content"][0]["text"]
            == "Error: tool 'touch' was not approved; the call was not executed."
        )
        assert not target.exists()
        # An answer under a key that was never asked counts for nothing: the server asks again.
        other = {"other": YES["confirm"]}
        asked(srv.call("touch", args, inputResponses=other, requestState=state))
        assert not target.exists()
        done = srv.call("touch", args, inputResponses=YES, requestState=state)["result"]
        assert (done["isError"], done["content"][0]["text"]) == (False, f"created {target}")
    assert target.exists()


def refusal(answer: dict[str, Any]) -> tuple[int, str]:
    assert "result" not in answer, answer
    return answer["error"]["code"], answer["error"]["message"]


def test_a_retry_with_other_arguments_or_for_another_tool_is_refused(tmp_path):
    first, other = tmp_path / "first", tmp_path / "other"
    with server() as srv:
        state, _ = asked(srv.call("touch", {"path": str(first)}))
        answer = srv.call("touch", {"path": str(other)}, inputResponses=YES, requestState=state)
        assert refusal(answer) == (-32602, REFUSED)
        answer = srv.call("wipe", {"path": str(first)}, inputResponses=YES, requestState=state)
        assert refusal(answer) == (-32602, REFUSED)
        # Extra arguments change the digest as well.
        answer = srv.call("touch", {"path": str(first), "x": 1}, inputResponses=YES, requestState=state)
        assert refusal(answer) == (-32602, REFUSED)
    assert not first.exists() and not other.exists()


def test_a_forged_or_tampered_state_is_refused(tmp_path):
    target = tmp_path / "made"
    args = {"path": str(target)}
    with server() as srv:
        state, _ = asked(srv.call("touch", args))
        body, _, tag = state.rpartition(".")
        flipped = body + "." + ("A" if tag[0] != "A" else "B") + tag[1:]
        # The state is signed, not encrypted: rewrite what it remembers (an approval that
        # was never given) and keep the signature.
        version, _, payload = body.partition(".")
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        remembered = json.loads(raw[8:])  # after the 8-byte expiry
        assert remembered == {"asked": ["confirm"], "answers": {}}
        remembered["answers"] = YES
        rewritten = raw[:8] + json.dumps(remembered).encode()
        encoded = base64.urlsafe_b64encode(rewritten).decode().rstrip("=")
        rewritten_state = f"{version}.{encoded}.{tag}"
        answer = srv.call("touch", args, requestState=rewritten_state)
        assert refusal(answer) == (-32602, REFUSED)
        for forged in (flipped, state[:-4], "rs1.e30.AAAA", "", "x" * 5000):
            answer = srv.call("touch", args, inputResponses=YES, requestState=forged)
            assert refusal(answer) == (-32602, REFUSED), forged
        answer = srv.call("touch", args, inputResponses=YES)
        no_state = (
            "the requestState of this retry is refused: inputResponses came without the "
            "requestState this server sent with its questions. Call the tool again without "
            "inputResponses and requestState to be asked anew."
        )
        assert refusal(answer) == (-32602, no_state)
    assert not target.exists()


def test_a_state_from_another_server_process_is_refused(tmp_path: Path):
    target = tmp_path / "made"
    args = {"path": str(target)}
    with server() as one, server() as another:
        state, _ = asked(one.call("touch", args))
        assert refusal(another.call("touch", args, inputResponses=YES, requestState=state)) == (
            -32602,
            REFUSED,
        )
        assert not target.exists()
        done = one.call("touch", args, inputResponses=YES, requestState=state)["result"]
        assert done["isError"] is False
    assert target.exists()
