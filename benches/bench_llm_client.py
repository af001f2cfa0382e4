"""LLMClient against a loopback chat-completions server (issue 24).

The server runs in a child process (so it never competes with the client for the GIL): a
`ThreadingHTTPServer` speaking HTTP/1.1 with keep-alive, answering every POST with the same
small completion, and counting the connections it accepted (GET /connections).

Figures, per request (request built, sent, reply parsed into an `LLMResponse`):
- floor: `http.client` on one kept-alive connection, `json` both ways (the least a Python
  client can do);
- the former `LLMClient` (urllib, a new connection per request), reproduced here;
- `LLMClient.chat` and `LLMClient.achat` (the Rust core over reqwest);
- the official `openai` SDK's client on the same server, when it is installed.
Then 100 concurrent async requests: wall time and connections opened, ours (`achat` under
`asyncio.gather`) against the former client (`asyncio.to_thread` of urllib, what its `achat` did).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agentmaker import LLMClient, LLMResponse
from harness import async_per_call_us, per_call_us, report

GROUP = "llm"
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
REPLY = json.dumps(
    {
        "id": "x",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
    }
).encode()


def serve() -> None:
    """The child process: serve until stdin closes; print the port first."""
    connections = 0

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes

        def setup(self) -> None:
            nonlocal connections
            super().setup()
            connections += 1

        def do_GET(self) -> None:
            body = str(connections).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(REPLY)))
            self.end_headers()
            self.wfile.write(REPLY)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256

    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()


def connections(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", "/connections")
    n = int(conn.getresponse().read())
    conn.close()
    return n


class Urllib:
    """The former LLMClient.chat: urllib, json, a new connection per request."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def chat(self, messages: list, tools: list | None = None) -> LLMResponse:
        body = json.dumps({"model": "m", "messages": messages, "tools": tools}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        req = urllib.request.Request(
            f"{self.base}/chat/completions", data=body, headers=headers, method="POST"
        )
        with self.opener.open(req, timeout=60) as resp:
            payload = json.loads(resp.read())
        msg = payload["choices"][0]["message"]
        return LLMResponse(content=msg["content"], usage=payload["usage"], raw=payload)


def keepalive_floor(port: int) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Content-Type": "application/json"}

    def call() -> None:
        body = json.dumps({"model": "m", "messages": MESSAGES, "tools": TOOLS})
        conn.request("POST", "/v1/chat/completions", body=body, headers=headers)
        json.loads(conn.getresponse().read())

    try:
        return per_call_us(call, number=500, repeat=5)
    finally:
        conn.close()


def concurrent(port: int, base: str) -> None:
    ours = LLMClient("m", base_url=base, max_retries=0)
    old = Urllib(base)

    async def ours_burst() -> None:
        await asyncio.gather(*(ours.achat(MESSAGES, tools=TOOLS) for _ in range(100)))

    async def old_burst() -> None:
        await asyncio.gather(*(asyncio.to_thread(old.chat, MESSAGES, TOOLS) for _ in range(100)))

    for name, burst in (("LLMClient.achat", ours_burst), ("former client (urllib on threads)", old_burst)):
        asyncio.run(burst())  # warm-up: ours fills its pool here

        async def three(burst=burst) -> None:
            for _ in range(3):
                await burst()

        before = connections(port)
        start = time.perf_counter_ns()
        asyncio.run(three())
        elapsed = (time.perf_counter_ns() - start) / 3 / 1000
        opened = (connections(port) - before) / 3
        report(
            GROUP, f"100 concurrent requests: {name}", elapsed, note=f"{opened:.0f} new connections per burst"
        )


def main() -> None:
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        base = f"http://127.0.0.1:{port}/v1"
        floor = keepalive_floor(port)
        report(GROUP, "http.client on one kept-alive connection (floor)", floor)
        old = Urllib(base)
        report(
            GROUP,
            "former LLMClient (urllib, new connection each)",
            per_call_us(lambda: old.chat(MESSAGES, TOOLS), number=500, repeat=5),
            floor_us=floor,
        )
        ours = LLMClient("m", base_url=base)
        before = connections(port)
        chat = per_call_us(lambda: ours.chat(MESSAGES, tools=TOOLS), number=500, repeat=5)
        report(
            GROUP,
            "LLMClient.chat",
            chat,
            floor_us=floor,
            note=f"{connections(port) - before} connections for 3,500 requests",
        )
        report(GROUP, "LLMClient.achat (one loop, sequential)", async_chat(ours), floor_us=floor)
        sdk(base, floor)
        concurrent(port, base)
    finally:
        child.kill()
        child.wait()


def async_chat(client: LLMClient) -> float:
    return async_per_call_us(lambda: client.achat(MESSAGES, tools=TOOLS), number=500, repeat=5)


def sdk(base: str, floor: float) -> None:
    try:
        import openai  # type: ignore[import-not-found]
    except ImportError:
        print(f"{GROUP:<10} the openai SDK is not installed: its client was not measured", flush=True)
        return
    client = openai.OpenAI(base_url=base, api_key="unused")
    report(
        GROUP,
        f"openai SDK {openai.__version__} chat.completions.create",
        per_call_us(
            lambda: client.chat.completions.create(model="m", messages=MESSAGES, tools=TOOLS),
            number=500,
            repeat=5,
        ),
        floor_us=floor,
    )


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
elif __name__ == "__main__":
    main()
