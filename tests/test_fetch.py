"""FetchTool (``fetch_url``) against HTTP servers on 127.0.0.1 only.

Refusals are checked by counting the connections the loopback server accepted: a refused URL
must reach nothing. Non-loopback ranges (metadata, private networks) are covered by the core's
unit tests of the address check, which never connect.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from agentmaker import Agent, FetchTool, ToolConfigError, ToolRegistry
from agentmaker.testing import ScriptedLLM

PAGE = (
    "<html><head><title>Release notes</title><script>steal()</script></head><body>"
    "<h1>Version 2</h1><p>Faster <b>grep</b>, see <a href='/docs'>the docs</a>.</p></body></html>"
)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def send(self, code: int, ctype: str, body: bytes, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path == "/page":
            self.send(200, "text/html; charset=utf-8", PAGE.encode())
        elif url.path == "/text":
            self.send(200, "text/plain", ("0123456789" * 10).encode())
        elif url.path == "/latin1":
            self.send(200, "text/plain; charset=iso-8859-1", b"caf\xe9")
        elif url.path == "/redirect":
            self.send(302, "text/plain", b"", {"Location": parse_qs(url.query)["to"][0]})
        elif url.path == "/loop":
            self.send(302, "text/plain", b"", {"Location": "/loop"})
        elif url.path == "/big":
            self.send(200, "text/plain", b"x" * 300_000)
        elif url.path == "/slow":
            time.sleep(3)
            self.send(200, "text/plain", b"late")
        elif url.path == "/png":
            self.send(200, "image/png", b"\x89PNG\r\n\x1a\n\0\0")
        else:
            self.send(404, "text/plain", b"missing")


class CountingServer(ThreadingHTTPServer):
    daemon_threads = True
    connections = 0

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections += 1
        return True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client hung up on a capped or timed-out response, as the tests make it do


@pytest.fixture
def server() -> Iterator[CountingServer]:
    srv = CountingServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join()


def fetch(tool: FetchTool, url: str, **extra: Any) -> Any:
    reg = ToolRegistry()
    reg.register(tool)
    return reg.execute_tool("fetch_url", {"url": url, **extra})


def port(srv: CountingServer) -> int:
    return int(srv.server_address[1])


def test_loopback_in_every_spelling_is_refused_without_a_connection(server: CountingServer) -> None:
    tool = FetchTool()
    p = port(server)
    for url in [
        f"http://127.0.0.1:{p}/page",
        f"http://localhost:{p}/page",
        f"http://LOCALHOST.:{p}/page",
        f"http://api.localhost:{p}/page",
        f"http://[::1]:{p}/page",
        f"http://0.0.0.0:{p}/page",
        f"http://2130706433:{p}/page",
        f"http://0177.0.0.1:{p}/page",
        f"http://0x7f000001:{p}/page",
        f"http://[::ffff:127.0.0.1]:{p}/page",
    ]:
        resp = fetch(tool, url)
        assert resp.status == "error", url
        assert "Only public internet addresses can be fetched." in resp.text, (url, resp.text)
    assert "localhost resolves to" in fetch(tool, f"http://localhost:{p}/page").text
    assert server.connections == 0


def test_page_as_markdown_with_title_and_paging(server: CountingServer) -> None:
    tool = FetchTool(allowed_hosts=["127.0.0.1"])
    base = f"http://127.0.0.1:{port(server)}"
    resp = fetch(tool, f"{base}/page")
    assert resp.status == "success", resp.text
    assert resp.text == (
        f"URL: {base}/page\nTitle: Release notes\nContent-Type: text/html; charset=utf-8\n"
        "Characters 0-52 of 52\n\n# Version 2\n\nFaster **grep**, see [the docs](/docs)."
    )
    first = fetch(tool, f"{base}/text", max_chars=30)
    assert (
        "Characters 0-30 of 100; read on with start=30\n\n" + "0123456789" * 3 == first.text.split("\n", 3)[3]
    )
    rest = fetch(tool, f"{base}/text", start=90, max_chars=30)
    assert rest.text.endswith("Characters 90-100 of 100\n\n0123456789")
    assert "past the end" in fetch(tool, f"{base}/text", start=100).text
    assert fetch(tool, f"{base}/latin1").text.endswith("\n\ncafé")


def test_redirects_are_checked_on_every_hop(server: CountingServer) -> None:
    tool = FetchTool(allowed_hosts=["127.0.0.1"])
    p = port(server)
    base = f"http://127.0.0.1:{p}"
    ok = fetch(tool, f"{base}/redirect?to=/page")
    assert ok.status == "success" and ok.text.startswith(f"URL: {base}/page\n")
    before = server.connections
    for target, why in [
        (
            f"http://localhost:{p}/page",
            "localhost resolves to 127.0.0.1, which is not a public address (loopback)",
        ),
        (
            f"http://127.0.0.2:{p}/page",
            f"it redirected to http://127.0.0.2:{p}/page, and 127.0.0.2 is not a public address (loopback)",
        ),
        (f"http://[::1]:{p}/page", "and [::1] is not a public address (loopback)"),
        ("http://0/", "and 0.0.0.0 is not a public address (unspecified)"),
        ("file:///etc/passwd", "redirected to an invalid location"),
    ]:
        resp = fetch(tool, f"{base}/redirect?to={target}")
        assert resp.status == "error" and why in resp.text, (target, resp.text)
    # Each refused redirect cost only its own first hop.
    assert server.connections - before <= 5
    assert "redirected more than 5 times" in fetch(tool, f"{base}/loop").text


def test_caps_status_and_types(server: CountingServer) -> None:
    base = f"http://127.0.0.1:{port(server)}"
    small = FetchTool(allowed_hosts=["127.0.0.1"], max_bytes=1000, timeout=1.0)
    big = fetch(small, f"{base}/big")
    assert "Characters 0-1000 of 1000 (the download stopped at 1000 bytes)" in big.text
    assert fetch(small, f"{base}/slow").text == f"Error: fetching {base}/slow took longer than 1 s; stopped"
    assert (
        fetch(small, f"{base}/png").text
        == f"Error: {base}/png is image/png content, which fetch_url cannot show as text"
    )
    assert fetch(small, f"{base}/nope").text == f"Error: {base}/nope answered HTTP 404"
    with pytest.raises(ToolConfigError, match="timeout must be a positive number"):
        FetchTool(timeout=0)
    with pytest.raises(ToolConfigError, match="max_bytes must be a positive integer"):
        FetchTool(max_bytes=0)


def test_allow_private_and_agent_run(server: CountingServer) -> None:
    base = f"http://127.0.0.1:{port(server)}"
    tool = FetchTool(allow_private=True)
    assert tool.read_only and tool.external_content and tool.supports_parallel
    llm = ScriptedLLM([ScriptedLLM.tool_call("fetch_url", {"url": f"{base}/page"}), "read it"])
    result = Agent("reader", llm, tools=[tool]).run("what changed?")
    assert [c.status for c in result.tool_calls] == ["success"]
    body = next(m["content"] for m in llm.requests[1].messages if m["role"] == "tool")
    assert body.startswith("[External content returned by tool 'fetch_url'")
    assert "# Version 2" in body and "steal()" not in body
