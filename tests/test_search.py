"""SearchTool against loopback HTTP peers that answer in each provider's documented format, and
misbehave on request (500, HTML instead of JSON, broken bodies, slow answers, redirects, key
echoes). Every provider endpoint points at 127.0.0.1: nothing here reaches the internet."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from agentmaker import SearchTool, ToolConfigError, ToolRegistry
from forked_script import run_forked

KEYS = {
    "TAVILY_API_KEY": "tvly-SECRET-aaaa1111",
    "BRAVE_API_KEY": "brave-SECRET-bbbb2222",
    "SERPAPI_API_KEY": "serp-SECRET-cccc3333",
}
URL_ENVS = {
    "tavily": "AGENTMAKER_TAVILY_URL",
    "ddg": "AGENTMAKER_DUCKDUCKGO_URL",
    "brave": "AGENTMAKER_BRAVE_URL",
    "serpapi": "AGENTMAKER_SERPAPI_URL",
}


def ddg_page(n: int) -> str:
    ad = (
        '<div class="result results_links result--ad"><h2 class="result__title">'
        '<a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;x=1">'
        'Sponsored</a></h2><a class="result__snippet" href="https://duckduckgo.com/y.js?x">Buy now</a></div>'
    )
    items = []
    for i in range(n):
        target = urllib.parse.quote(f"https://ddg.example/{i}?a=1&b=2", safe="")
        items.append(
            '<div class="result results_links results_links_deep web-result">'
            '<div class="links_main links_deep result__body"><h2 class="result__title">'
            f'<a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg={target}&amp;rut=abc{i}">'
            f"DDG <b>result</b> {i}</a></h2>"
            f'<a class="result__snippet" href="//duckduckgo.com/l/?uddg={target}">Snippet &amp; text {i}</a>'
            "</div></div>"
        )
    return f"<!DOCTYPE html><html><body>{ad}{''.join(items)}</body></html>"


def ok_body(provider: str, query: str) -> tuple[str, str]:
    if provider == "tavily":
        results = [
            {
                "title": f"Tavily {i}",
                "url": f"https://tavily.example/{i}",
                "content": f"content {i}",
                "score": 0.9,
            }
            for i in range(8)
        ]
        return "application/json", json.dumps(
            {"query": query, "answer": "A short answer.", "results": results}
        )
    if provider == "ddg":
        return "text/html; charset=utf-8", ddg_page(8)
    if provider == "brave":
        results = [
            {
                "title": f"<strong>Brave</strong> {i}",
                "url": f"https://brave.example/{i}",
                "description": f"desc {i}",
            }
            for i in range(8)
        ]
        return "application/json", json.dumps(
            {"type": "search", "web": {"type": "search", "results": results}}
        )
    results = [
        {"position": i + 1, "title": f"Serp {i}", "link": f"https://serp.example/{i}", "snippet": f"snip {i}"}
        for i in range(8)
    ]
    return "application/json", json.dumps(
        {"search_metadata": {"status": "Success"}, "organic_results": results}
    )


class Peer:
    """One loopback server playing all four providers; `modes` decides how each one behaves."""

    def __init__(self) -> None:
        self.modes: dict[str, str] = {}
        self.requests: list[dict] = []
        self.slow_seconds = 3.0
        #: Mode "together": a request is answered only once this barrier's parties are all in
        #: (requests that overlap meet there; requests made one after another never do).
        self.meeting = threading.Barrier(1)
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                peer.handle(self, b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                peer.handle(self, self.rfile.read(length))

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address) -> None:
                # The client gives up on purpose (oversized or slow answers): not a test failure.
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, provider: str) -> str:
        return f"{self.base}/{provider}"

    def seen(self, provider: str) -> list[dict]:
        return [r for r in self.requests if r["provider"] == provider]

    def handle(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        parsed = urllib.parse.urlsplit(h.path)
        provider = parsed.path.strip("/").split("/")[0]
        query = dict(urllib.parse.parse_qsl(parsed.query))
        record = {
            "provider": provider,
            "method": h.command,
            "path": parsed.path,
            "query": query,
            "headers": {k.lower(): v for k, v in h.headers.items()},
            "body": body.decode("utf-8", "replace"),
        }
        self.requests.append(record)
        mode = self.modes.get(provider, "ok")
        key = (
            record["headers"].get("authorization", "").removeprefix("Bearer ")
            or record["headers"].get("x-subscription-token", "")
            or query.get("api_key", "")
        )
        if provider == "tavily" and body:
            q = json.loads(body).get("query", "")
        elif provider == "ddg":
            q = dict(urllib.parse.parse_qsl(record["body"])).get("q", "")
        else:
            q = query.get("q", "")
        status, ctype, payload = 200, "application/json", ""
        if mode == "ok":
            ctype, payload = ok_body(provider, q)
        elif mode == "500":
            status, ctype, payload = 500, "text/html", "<html><body>Internal Server Error</body></html>"
        elif mode == "html":
            ctype, payload = "text/html", "<!DOCTYPE html><html><body>Welcome! Please log in.</body></html>"
        elif mode == "malformed":
            payload = '{"results": [{"title": "cut off'
        elif mode == "empty":
            payload = {
                "tavily": json.dumps({"query": q, "answer": None, "results": []}),
                "ddg": "<html><body><div class='no-results'>No results.</div></body></html>",
                "brave": json.dumps({"type": "search"}),
                "serpapi": json.dumps({"organic_results": []}),
            }[provider]
        elif mode == "slow":
            time.sleep(self.slow_seconds)
            ctype, payload = ok_body(provider, q)
        elif mode == "together":
            self.meeting.wait()  # a broken or timed-out meeting closes the connection unanswered
            ctype, payload = ok_body(provider, q)
        elif mode == "hangup":
            # Accept the request, then close the connection without a single byte of answer.
            h.close_connection = True
            return
        elif mode == "redirect":
            h.send_response(302)
            h.send_header("Location", "https://elsewhere.example/")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        elif mode == "echo_key_error":
            status, payload = 401, json.dumps({"error": f"Invalid API key {key}. Check {key}."})
        elif mode == "echo_key_ok":
            ctype, payload = ok_body(provider, q)
            payload = payload.replace("0", key, 1)
        elif mode == "huge":
            payload = json.dumps({"results": [], "pad": "x" * (5 * 1024 * 1024)})
        data = payload.encode()
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def peer() -> Iterator[Peer]:
    p = Peer()
    yield p
    p.close()


@pytest.fixture(autouse=True)
def loopback_only(peer: Peer, monkeypatch: pytest.MonkeyPatch) -> Peer:
    """No keys, every endpoint on the loopback peer, fresh behaviour per test."""
    for env in KEYS:
        monkeypatch.delenv(env, raising=False)
    for provider, env in URL_ENVS.items():
        monkeypatch.setenv(env, peer.url(provider))
    peer.modes.clear()
    peer.requests.clear()
    peer.slow_seconds = 3.0
    return peer


def set_keys(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names or tuple(KEYS):
        monkeypatch.setenv(name, KEYS[name])


def assert_no_secret(resp) -> None:
    blob = resp.text + json.dumps(resp.data)
    for key in KEYS.values():
        assert key not in blob
        assert key.split("-SECRET-")[1] not in blob


# --- identity and construction -----------------------------------------------------------------


def test_identity() -> None:
    tool = SearchTool(max_results=3)
    assert tool.name == "search"
    assert tool.origin == "builtin"
    assert [p.name for p in tool.get_parameters()] == ["query"]
    assert tool.get_parameters()[0].type == "string"
    assert (tool.external_content, tool.supports_parallel, tool.requires_confirmation) == (True, True, False)
    assert tool.max_results == 3 and tool.request_timeout == 10.0
    assert "3 results" in tool.description
    assert SearchTool().max_results == 5


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"max_results": 0}, ValueError, "max_results must be a positive integer, got 0"),
        ({"max_results": -3}, ValueError, "max_results must be a positive integer, got -3"),
        ({"max_results": 51}, ValueError, "at most 50"),
        ({"timeout": 0}, ValueError, "timeout"),
        ({"timeout": float("nan")}, ValueError, "timeout"),
        ({"brave_url": "http://search.example.com/"}, ValueError, "loopback"),
        ({"tavily_url": "file:///etc/passwd"}, ValueError, "scheme"),
        ({"serpapi_url": "not a url"}, ValueError, "SerpAPI"),
        ({"prompts": {"search.nope": "x"}}, ToolConfigError, "search.nope"),
    ],
)
def test_bad_construction(kwargs: dict, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        SearchTool(**kwargs)


def test_empty_and_non_text_queries(peer: Peer) -> None:
    tool = SearchTool()
    assert tool.run({"query": "   "}).text == "Error: the search query must not be empty"
    assert tool.run({}).text == "Error: the search query must not be empty"
    assert tool.run({"query": 5}).text == "Error: the search query must be a string"
    assert (
        tool.run({"query": "x" * 2001}).text == "Error: the search query is too long (over 2000 characters)"
    )
    assert peer.requests == []


# --- providers -----------------------------------------------------------------------------------


def test_without_keys_duckduckgo_answers(peer: Peer) -> None:
    resp = SearchTool(max_results=3).run({"query": "  rust ownership "})
    assert resp.status == "success", resp.text
    assert resp.text == (
        "[source: DuckDuckGo]\n"
        "1. DDG result 0\n   Snippet & text 0\n   https://ddg.example/0?a=1&b=2\n"
        "2. DDG result 1\n   Snippet & text 1\n   https://ddg.example/1?a=1&b=2\n"
        "3. DDG result 2\n   Snippet & text 2\n   https://ddg.example/2?a=1&b=2"
    )
    assert resp.data["source"] == "DuckDuckGo" and resp.data["answer"] is None
    assert resp.data["results"][0] == {
        "title": "DDG result 0",
        "url": "https://ddg.example/0?a=1&b=2",
        "snippet": "Snippet & text 0",
    }
    assert len(resp.data["results"]) == 3
    assert resp.data["degraded"] == ["Tavily: skipped (TAVILY_API_KEY is not set)"]
    # Keyed providers without keys are never contacted.
    assert [r["provider"] for r in peer.requests] == ["ddg"]
    req = peer.requests[0]
    assert req["method"] == "POST" and urllib.parse.parse_qs(req["body"]) == {"q": ["rust ownership"]}


def test_tavily_first_when_its_key_is_set(peer: Peer, monkeypatch: pytest.MonkeyPatch) -> None:
    set_keys(monkeypatch)
    resp = SearchTool(max_results=2).run({"query": "capital of France"})
    assert resp.status == "success", resp.text
    assert resp.text == (
        "[source: Tavily]\nAI answer: A short answer.\n\n"
        "1. Tavily 0\n   content 0\n   https://tavily.example/0\n"
        "2. Tavily 1\n   content 1\n   https://tavily.example/1"
    )
    assert resp.data["answer"] == "A short answer." and "degraded" not in resp.data
    [req] = peer.requests
    assert req["headers"]["authorization"] == f"Bearer {KEYS['TAVILY_API_KEY']}"
    sent = json.loads(req["body"])
    assert (
        sent["query"] == "capital of France" and sent["max_results"] == 2 and sent["include_answer"] is True
    )
    assert_no_secret(resp)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("500", "Tavily: HTTP 500"),
        ("html", "Tavily: unreadable answer (HTML instead of JSON)"),
        ("malformed", "Tavily: unreadable answer (not JSON"),
        ("empty", "Tavily: no results"),
        ("redirect", "Tavily: HTTP 302"),
        ("hangup", "Tavily: request failed ("),
        ("huge", "Tavily: answer larger than 4194304 bytes"),
        ("echo_key_error", "Tavily: HTTP 401 (Invalid API key [redacted]. Check [redacted].)"),
    ],
)
def test_tavily_failure_falls_back_to_duckduckgo(
    peer: Peer, monkeypatch: pytest.MonkeyPatch, mode: str, reason: str
) -> None:
    set_keys(monkeypatch, "TAVILY_API_KEY")
    peer.modes["tavily"] = mode
    resp = SearchTool(max_results=2).run({"query": "q"})
    assert resp.status == "success", resp.text
    assert resp.data["source"] == "DuckDuckGo"
    [degraded] = resp.data["degraded"]
    assert degraded.startswith(reason), degraded
    assert [r["provider"] for r in peer.requests] == ["tavily", "ddg"]
    assert_no_secret(resp)


def test_slow_provider_times_out_and_the_next_one_answers(
    peer: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch, "TAVILY_API_KEY")
    peer.modes["tavily"] = "slow"
    peer.slow_seconds = 3.0
    start = time.monotonic()
    resp = SearchTool(max_results=1, timeout=0.5).run({"query": "q"})
    elapsed = time.monotonic() - start
    assert resp.status == "success" and resp.data["source"] == "DuckDuckGo", resp.text
    assert resp.data["degraded"] == ["Tavily: no answer within 0.5 s"]
    assert elapsed < 2.5


def test_brave_then_serpapi(peer: Peer, monkeypatch: pytest.MonkeyPatch) -> None:
    set_keys(monkeypatch, "BRAVE_API_KEY", "SERPAPI_API_KEY")
    peer.modes["ddg"] = "empty"
    resp = SearchTool(max_results=2).run({"query": "brave query"})
    assert resp.status == "success", resp.text
    assert resp.text == (
        "[source: Brave]\n1. Brave 0\n   desc 0\n   https://brave.example/0\n2. Brave 1\n   desc 1\n   https://brave.example/1"
    )
    assert resp.data["degraded"] == ["Tavily: skipped (TAVILY_API_KEY is not set)", "DuckDuckGo: no results"]
    brave = peer.seen("brave")[0]
    assert brave["method"] == "GET" and brave["query"] == {"q": "brave query", "count": "2"}
    assert brave["headers"]["x-subscription-token"] == KEYS["BRAVE_API_KEY"]
    assert brave["headers"]["accept"] == "application/json"

    peer.requests.clear()
    peer.modes["brave"] = "malformed"
    resp = SearchTool(max_results=2).run({"query": "serp query"})
    assert resp.status == "success" and resp.data["source"] == "SerpAPI", resp.text
    assert resp.data["results"][1] == {
        "title": "Serp 1",
        "url": "https://serp.example/1",
        "snippet": "snip 1",
    }
    serp = peer.seen("serpapi")[0]
    assert serp["query"] == {
        "engine": "google",
        "q": "serp query",
        "num": "2",
        "api_key": KEYS["SERPAPI_API_KEY"],
    }
    assert_no_secret(resp)


def test_all_failing_lists_every_reason_without_keys(peer: Peer, monkeypatch: pytest.MonkeyPatch) -> None:
    set_keys(monkeypatch)
    peer.modes.update(tavily="echo_key_error", ddg="500", brave="html", serpapi="echo_key_error")
    resp = SearchTool().run({"query": "q"})
    assert resp.status == "error"
    lines = resp.text.splitlines()
    assert lines[0] == "Error: search failed; all sources are unavailable:"
    assert lines[1] == "- Tavily: HTTP 401 (Invalid API key [redacted]. Check [redacted].)"
    assert lines[2] == "- DuckDuckGo: HTTP 500"
    assert lines[3] == "- Brave: unreadable answer (HTML instead of JSON)"
    assert lines[4] == "- SerpAPI: HTTP 401 (Invalid API key [redacted]. Check [redacted].)"
    assert lines[5].startswith("Tip: set TAVILY_API_KEY")
    assert len(resp.data["errors"]) == 4
    assert_no_secret(resp)


def test_unreachable_and_misconfigured_endpoints(
    peer: Peer, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    set_keys(monkeypatch)
    monkeypatch.setenv("AGENTMAKER_TAVILY_URL", f"http://127.0.0.1:{refused_port}/")
    monkeypatch.setenv("AGENTMAKER_DUCKDUCKGO_URL", "http://203.0.113.7/html/")
    monkeypatch.setenv("AGENTMAKER_BRAVE_URL", "gopher://127.0.0.1/")
    peer.modes["serpapi"] = "empty"
    resp = SearchTool(timeout=2).run({"query": "q"})
    assert resp.status == "error"
    errors = resp.data["errors"]
    assert errors[0].startswith("Tavily: request failed (") and "onnect" in errors[0], errors[0]
    assert errors[1].startswith(
        "DuckDuckGo: invalid endpoint (AGENTMAKER_DUCKDUCKGO_URL: plain http is only allowed"
    )
    assert errors[2] == "Brave: invalid endpoint (AGENTMAKER_BRAVE_URL: unsupported scheme 'gopher')"
    assert errors[3] == "SerpAPI: no results"
    # The misconfigured ones were never contacted; the dead one could not be.
    assert [r["provider"] for r in peer.requests] == ["serpapi"]
    assert_no_secret(resp)


def test_key_echoed_in_results_is_scrubbed(peer: Peer, monkeypatch: pytest.MonkeyPatch) -> None:
    set_keys(monkeypatch, "TAVILY_API_KEY")
    peer.modes["tavily"] = "echo_key_ok"
    resp = SearchTool(max_results=1).run({"query": "q"})
    assert resp.status == "success" and resp.data["source"] == "Tavily"
    assert "[redacted]" in resp.text
    assert_no_secret(resp)


def test_constructor_endpoints_win_over_environment(
    peer: Peer, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    monkeypatch.setenv("AGENTMAKER_DUCKDUCKGO_URL", f"http://127.0.0.1:{refused_port}/")
    resp = SearchTool(duckduckgo_url=peer.url("ddg") + "/html/", max_results=1).run({"query": "q"})
    assert resp.status == "success" and resp.data["source"] == "DuckDuckGo", resp.text
    assert peer.requests[0]["path"] == "/ddg/html/"


def test_prompts_localize(peer: Peer) -> None:
    tool = SearchTool(
        max_results=1,
        prompts={"search.source_label": "[Quelle: {source}]", "search.empty": "Fehler: leere Suche"},
    )
    assert tool.run({"query": ""}).text == "Fehler: leere Suche"
    assert tool.run({"query": "q"}).text.startswith("[Quelle: DuckDuckGo]\n1. DDG result 0")


def test_through_the_registry_sync_and_parallel(peer: Peer) -> None:
    reg = ToolRegistry()
    reg.register(SearchTool(max_results=2))
    resp = reg.execute_tool("search", {"query": "one"})
    assert resp.status == "success" and len(resp.data["results"]) == 2
    assert reg.execute_tool("search", {"query": 3}).status == "error"

    # Each answer waits until all three requests are in: calls that queued instead of running
    # at once would leave the first waiting alone until the tool's 10 s timeout.
    peer.modes["ddg"] = "together"
    peer.meeting = threading.Barrier(3, timeout=60)

    async def main():
        return await asyncio.gather(*(reg.aexecute_tool("search", {"query": f"q{i}"}) for i in range(3)))

    results = asyncio.run(main())
    assert [(r.status, r.data["source"]) for r in results] == [("success", "DuckDuckGo")] * 3, results


FORKED_SEARCH = """
import os, sys, time
sys.path.insert(0, {tests!r})
import test_search as ts
from agentmaker import SearchTool

peer = ts.Peer()
for env in ts.KEYS:
    os.environ.pop(env, None)
for provider, env in ts.URL_ENVS.items():
    os.environ[env] = peer.url(provider)
tool = SearchTool(max_results=2, timeout=3)
seen = [tool.run({{"query": "rust"}}).status]
pid = os.fork()
if pid == 0:
    start = time.monotonic()
    out = [tool.run({{"query": "rust"}}).status, SearchTool(max_results=2, timeout=3).run({{"query": "rust"}}).status]
    print(repr((out, time.monotonic() - start)), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
seen.append(tool.run({{"query": "rust"}}).status)
print(repr(seen), flush=True)
peer.close()
"""


def test_a_search_tool_made_before_a_fork_works_in_the_child(tmp_path: Path) -> None:
    """A runtime has no threads in a forked child: the tool made in the parent used to wait
    out its timeout there and blame the provider; it now looks the runtime up per request,
    and a client made before the fork (whose pooled connections are the parent's) is not
    used in the child."""
    child, parent = run_forked(tmp_path, FORKED_SEARCH, timeout=60)
    (statuses, seconds) = child
    assert statuses == ["success", "success"]
    assert seconds < 2.5, "the parent's tool waited instead of answering"
    assert parent == ["success", "success"]
