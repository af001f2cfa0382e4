"""A minimal streamable-HTTP MCP endpoint that records the headers of every request.

Runs inside the test process on 127.0.0.1 (a thread); answers JSON (no SSE), one tool `whoami`
that returns the Authorization header it received.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class RecordingServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        #: Raw JSON text sent as the `tools/call` result instead of the normal one (hostile tests).
        self.call_result_text: str | None = None
        #: When set, a `tools/call` is answered with an SSE stream that first carries this many
        #: pings, `sampling/createMessage` requests and log notifications of the server's own.
        self.call_flood = 0
        #: The client's answers to those requests (the JSON bodies it posted), in order.
        self.replies: list[dict] = []
        #: A `tools/call` is answered in an SSE stream (after `call_flood` messages), not a body.
        self.call_as_sse = False
        #: The event stream answering a `tools/call` is held open after the answer (as a server
        #: that sends more events may), until the server stops.
        self.call_stream_held = False
        self._stopping = threading.Event()
        #: "accepted": a `tools/call` gets 202 and no answer; "other_id": a JSON answer whose
        #: id is not the request's.
        self.call_unanswered: str | None = None
        #: Raw JSON text sent as the `tools/list` result instead of the normal one.
        self.list_result_text: str | None = None
        #: (status, content type, body): a `tools/call` fails with this HTTP response.
        self.call_failure: tuple[int, str, bytes] | None = None
        #: The failure's body is sent, then the server stalls this many seconds before ending it.
        self.call_failure_stall = 0.0
        #: When set, a `tools/call` gets an event stream that ends after one event (id `ev-1`)
        #: without the answer; the GET resuming it after `ev-1` carries this answer text.
        self.call_resumed_answer: str | None = None
        self._resumed_id: object = None
        #: The `Mcp-Session-Id` the server gives (sent as Latin-1, as http.server does).
        self.session_id = "session-1"
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def _record(self) -> None:
                outer.requests.append((self.command, {k.lower(): v for k, v in self.headers.items()}))

            def do_GET(self) -> None:
                self._record()
                if outer.call_resumed_answer is not None and self.headers.get("Last-Event-ID") == "ev-1":
                    rid = json.dumps(outer._resumed_id)
                    answer = f'{{"jsonrpc":"2.0","id":{rid},"result":{outer.call_resumed_answer}}}'
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(b"id: ev-2\nevent: message\ndata: " + answer.encode() + b"\n\n")
                    self.wfile.flush()
                    return
                self.send_response(405)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_DELETE(self) -> None:
                self._record()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                self._record()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if "method" not in body and "id" in body:
                    outer.replies.append(body)
                if "id" not in body or "method" not in body:
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                method = body.get("method")
                if method == "initialize":
                    result = {
                        "protocolVersion": body["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "recording", "version": "1"},
                    }
                elif method == "tools/list":
                    result = {
                        "tools": [
                            {
                                "name": "whoami",
                                "description": "Echo the auth header.",
                                "inputSchema": {"type": "object"},
                            }
                        ]
                    }
                elif method == "tools/call":
                    auth = self.headers.get("Authorization", "<none>")
                    result = {"content": [{"type": "text", "text": auth}]}
                else:
                    result = {}
                data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
                if method == "tools/call" and outer.call_result_text is not None:
                    rid = json.dumps(body["id"])
                    data = f'{{"jsonrpc":"2.0","id":{rid},"result":{outer.call_result_text}}}'.encode()
                if method == "tools/list" and outer.list_result_text is not None:
                    rid = json.dumps(body["id"])
                    data = f'{{"jsonrpc":"2.0","id":{rid},"result":{outer.list_result_text}}}'.encode()
                if method == "tools/call" and outer.call_failure is not None:
                    status, kind, payload = outer.call_failure
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    stall = outer.call_failure_stall
                    self.send_header("Content-Length", str(len(payload) + (1 if stall else 0)))
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                    if stall:
                        time.sleep(stall)
                        self.wfile.write(b"\n")
                    return
                if method == "tools/call" and outer.call_resumed_answer is not None:
                    outer._resumed_id = body["id"]
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Mcp-Session-Id", outer.session_id)
                    self.end_headers()
                    self.wfile.write(
                        b'id: ev-1\nretry: 10\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message",'
                        b'"params":{"level":"info","data":"working"}}\n\n'
                    )
                    self.wfile.flush()
                    return
                if method == "tools/call" and outer.call_unanswered == "accepted":
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if method == "tools/call" and outer.call_unanswered == "other_id":
                    data = json.dumps({"jsonrpc": "2.0", "id": 999_999, "result": result}).encode()
                if method == "tools/call" and (outer.call_flood or outer.call_as_sse):
                    self._flood(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Mcp-Session-Id", outer.session_id)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _flood(self, answer: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Mcp-Session-Id", outer.session_id)
                self.end_headers()
                event = (
                    b'event: message\ndata: {"jsonrpc":"2.0","id":"ping-%d","method":"ping"}\n\n'
                    b'event: message\ndata: {"jsonrpc":"2.0","id":"sampling-%d","method":"sampling/createMessage",'
                    b'"params":{"messages":[],"maxTokens":5}}\n\n'
                    b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message",'
                    b'"params":{"level":"info","data":%d}}\n\n'
                )
                for start in range(0, outer.call_flood, 1000):
                    stop = min(start + 1000, outer.call_flood)
                    self.wfile.write(b"".join(event % (i, i, i) for i in range(start, stop)))
                self.wfile.write(b"event: message\ndata: " + answer + b"\n\n")
                self.wfile.flush()
                if outer.call_stream_held:
                    outer._stopping.wait(30)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address) -> None:
                pass  # a client that stops reading an oversized answer is expected here

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def many_values(shape: str) -> str:
    """A `tools/call` result of some 15 MB made of tiny values: millions of zeros in the
    structured content beside a short text ("zeros"), or nothing but 500,000 empty text blocks
    ("blocks")."""
    if shape == "error_zeros":  # a JSON-RPC error whose data is 3 million zeros
        zeros = ",".join(["0"] * 3_000_000)
        return '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"down","data":[' + zeros + "]}}"
    if shape == "list_zeros":  # a listing: its one tool, and 3 million zeros in its _meta
        zeros = ",".join(["0"] * 3_000_000)
        return '{"tools":[{"name":"whoami","inputSchema":{"type":"object"}}],"_meta":{"v":[' + zeros + "]}}"
    if shape == "blocks":
        return '{"content":[' + ",".join(['{"type":"text","text":""}'] * 500_000) + "]}"
    zeros = ",".join(["0"] * 7_000_000)
    return '{"content":[{"type":"text","text":"kept"}],"structuredContent":{"v":[' + zeros + "]}}"


if __name__ == "__main__":
    # A server in a process of its own: recording_http.py [CALL_FLOOD [zeros|blocks [sse]]]
    import sys

    with RecordingServer() as served:
        served.call_flood = int(sys.argv[1]) if len(sys.argv) > 1 else 0
        if sys.argv[2:3] == ["error_zeros"]:
            served.call_failure = (500, "application/json", many_values("error_zeros").encode())
        elif sys.argv[2:3] == ["list_zeros"]:
            served.list_result_text = many_values("list_zeros")
        elif len(sys.argv) > 2:
            served.call_result_text = many_values(sys.argv[2])
        served.call_as_sse = sys.argv[3:4] == ["sse"]
        print(served.url, flush=True)
        sys.stdin.read()  # until the parent closes our input (or dies)
