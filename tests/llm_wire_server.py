"""A scripted model server on 127.0.0.1 for the LLMClient tests: HTTP/1.1 with keep-alive,
whole JSON replies, chunked server-sent events, error statuses with headers, and bodies that
stall. It records every request (path, headers, JSON body; the body's bytes in ``raw``) and every
connection it accepts. On leaving its ``with`` block, every request body it received is checked
against the official SDK's request type for the endpoint it was sent to (unless ``check=False``
or the block raised; ``passed`` names top-level keys a test sends on purpose that the type lacks)."""

from __future__ import annotations

import json
import select
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from provider_wire_types import check_request


@dataclass
class Scripted:
    """One response: a status, headers, and either a whole body or chunks sent one by one
    (chunked transfer encoding). ``stall`` sends ``chunks`` and then nothing until the client
    hangs up or the server stops."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: list[bytes] | None = None
    stall: bool = False


def json_reply(obj: Any, status: int = 200, **headers: str) -> Scripted:
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return Scripted(status, {"Content-Type": "application/json", **headers}, data)


def sse_reply(events: list[Any], *, named: bool = False) -> Scripted:
    """Events as server-sent events; each one is cut in two chunks in the middle of its JSON,
    so the client must join bytes across reads. ``named`` adds ``event: <type>`` lines
    (Anthropic's style)."""
    chunks: list[bytes] = []
    for ev in events:
        data = ev if isinstance(ev, str) else json.dumps(ev)
        head = f"event: {ev['type']}\n" if named and isinstance(ev, dict) else ""
        text = f"{head}data: {data}\n\n".encode()
        cut = len(text) // 2
        chunks += [text[:cut], text[cut:]]
    return Scripted(200, {"Content-Type": "text/event-stream"}, chunks=chunks)


class WireServer:
    """``with WireServer([...]) as server:`` serves the scripted responses in order."""

    def __init__(self, script: list[Scripted], *, check: bool = True, passed: tuple[str, ...] = ()) -> None:
        self.script = list(script)
        self.check = check
        self.passed = passed
        self.requests: list[tuple[str, Any, Any]] = []
        self.raw: list[bytes] = []  # each request's body as sent
        self.connections = 0
        self.hung_up = threading.Event()  # a client closed a stalled response
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes

            def setup(self) -> None:
                super().setup()
                with outer._lock:
                    outer.connections += 1

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw
                with outer._lock:
                    outer.requests.append((self.path, self.headers, body))
                    outer.raw.append(raw)
                    reply = outer.script.pop(0) if outer.script else json_reply({"error": "unscripted"}, 500)
                try:
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    outer.hung_up.set()  # the client gave up before the response was out
                    self.close_connection = True

            def _send(self, reply: Scripted) -> None:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.chunks is None:
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                if reply.stall:
                    self._wait_for_hang_up()
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")

            def _wait_for_hang_up(self) -> None:
                while not outer._stop.is_set():
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable and not self.connection.recv(1):
                        outer.hung_up.set()
                        return

            def log_message(self, *args: Any) -> None:
                pass

        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str = "/v1") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
        if self.check and exc_type is None:
            for (path, _, _), raw in zip(self.requests, self.raw, strict=True):
                check_request(path.split("?")[0], raw, self.passed)
