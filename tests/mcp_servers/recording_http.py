"""A minimal streamable-HTTP MCP endpoint that records the headers of every request.

Runs inside the test process on 127.0.0.1 (a thread); answers JSON (no SSE), one tool `whoami`
that returns the Authorization header it received.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class RecordingServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        #: Raw JSON text sent as the `tools/call` result instead of the normal one (hostile tests).
        self.call_result_text: str | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def _record(self) -> None:
                outer.requests.append((self.command, {k.lower(): v for k, v in self.headers.items()}))

            def do_GET(self) -> None:
                self._record()
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
                if "id" not in body:
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
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Mcp-Session-Id", "session-1")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
        self.httpd.shutdown()
        self.httpd.server_close()
