"""Every public async method returns a real coroutine (``inspect.iscoroutine``), made outside
any event loop and then run through each asyncio entry point, and cancelling it reaches the
tool: an async tool sees CancelledError, a command's process group is killed, an MCP call is
cancelled at the server and the client goes on working."""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from agentmaker import (
    Agent,
    CalculatorTool,
    CLITool,
    LLMClient,
    NotesTool,
    SearchTool,
    Tool,
    ToolParameter,
    ToolRegistry,
    ToolResponse,
    ToolRetriever,
    ToolSearchTool,
    tool,
)
from agentmaker.testing import ScriptedLLM
from mcp_support import by_remote, sdk_client, slow_write_args, until_started
from proc_table import processes
from test_llm import FakeOpenAI, completion
from test_search import KEYS, Peer
from timeout_once_started import wait_for_once_started

# --- the entry points: each takes a coroutine made outside the loop and returns its result ------


async def _task(coro: Coroutine) -> Any:
    return await asyncio.get_running_loop().create_task(coro)


async def _gather(coro: Coroutine) -> Any:
    (result,) = await asyncio.gather(coro)
    return result


async def _wait_for(coro: Coroutine) -> Any:
    return await asyncio.wait_for(coro, 60)


async def _timeout(coro: Coroutine) -> Any:
    async with asyncio.timeout(60):
        return await coro


async def _task_group(coro: Coroutine) -> Any:
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(coro)
    return task.result()


def _run_in_loop(through: Callable[[Coroutine], Coroutine]) -> Callable[[Coroutine], Any]:
    return lambda coro: asyncio.run(through(coro))


ENTRY_POINTS: dict[str, Callable[[Coroutine], Any]] = {
    "asyncio.run": asyncio.run,
    "create_task": _run_in_loop(_task),
    "gather": _run_in_loop(_gather),
    "wait_for": _run_in_loop(_wait_for),
    "asyncio.timeout": _run_in_loop(_timeout),
    "TaskGroup": _run_in_loop(_task_group),
}


# --- the subjects: (make the coroutine, check the result) -------------------------------------


class OnlyRun(Tool):
    def __init__(self) -> None:
        super().__init__("only_run", "Sync only.")

    def get_parameters(self) -> list[ToolParameter]:
        return [ToolParameter("word", "string", "A word.")]

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.ok(parameters["word"].upper())


class OnlyArun(Tool):
    def __init__(self) -> None:
        super().__init__("only_arun", "Async only.")

    def get_parameters(self) -> list[ToolParameter]:
        return [ToolParameter("word", "string", "A word.")]

    async def arun(self, parameters: dict[str, Any]) -> ToolResponse:
        await asyncio.sleep(0)
        return ToolResponse.ok(parameters["word"][::-1])


@tool
def shout(word: str) -> str:
    """Upper-case a word."""
    return word.upper()


@tool
async def echo_later(word: str) -> str:
    """Echo a word after yielding to the loop."""
    await asyncio.sleep(0)
    return f"echo {word}"


NOTE = "milk\n"


class Subjects:
    """The objects under test; the MCP client is connected (and closed) through coroutines
    made outside any loop, like the rest."""

    def __init__(self, notes_dir: Path, peer: Peer) -> None:
        self.notes = NotesTool(str(notes_dir))
        assert self.notes.run({"action": "append", "path": "todo.md", "content": "milk"}).status == "success"
        self.cli = CLITool(["echo", "sleep"])
        self.search = SearchTool(
            max_results=2,
            timeout=30,
            tavily_url=peer.url("tavily"),
            duckduckgo_url=peer.url("ddg"),
            brave_url=peer.url("brave"),
            serpapi_url=peer.url("serpapi"),
        )
        reg = ToolRegistry()
        reg.register_all([shout, echo_later, OnlyRun(), OnlyArun()])
        retriever = ToolRetriever(reg, always_include=("tool_search",))
        self.tool_search = ToolSearchTool(retriever, top_k=1)
        reg.register(self.tool_search)
        self.registry = reg
        self.client = sdk_client(timeout=None)
        entered = self.client.__aenter__()
        assert inspect.iscoroutine(entered)
        assert asyncio.run(entered) is self.client
        loading = self.client.load_tools()
        assert inspect.iscoroutine(loading)
        self.mcp = by_remote(asyncio.run(loading))
        self.registry.register_all(list(self.mcp.values()))
        self.openai = FakeOpenAI([completion("from http")] * len(ENTRY_POINTS)).__enter__()
        self.llm = LLMClient("m", base_url=self.openai.url, api_key="")

    def close(self) -> None:
        self.openai.__exit__(None, None, None)
        for closing, returns in (
            (self.client.aclose(), None),
            (self.client.__aexit__(None, None, None), False),
        ):
            assert inspect.iscoroutine(closing)
            assert asyncio.run(closing) is returns
        assert not self.client.connected


@pytest.fixture(scope="module")
def subjects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Subjects]:
    with pytest.MonkeyPatch.context() as mp:
        for key in KEYS:  # no provider key: the search goes to the loopback peer's DuckDuckGo
            mp.delenv(key, raising=False)
        peer = Peer()
        made = Subjects(tmp_path_factory.mktemp("notes"), peer)
        try:
            yield made
        finally:
            made.close()
            peer.close()


def _text(expected: str) -> Callable[[Subjects, Any], None]:
    def check(s: Subjects, resp: Any) -> None:
        assert isinstance(resp, ToolResponse), resp
        assert resp.text == expected, resp.text

    return check


def _search_hits(s: Subjects, resp: Any) -> None:
    assert resp.status == "success", resp.text
    assert [r["url"] for r in resp.data["results"]] == [
        "https://ddg.example/0?a=1&b=2",
        "https://ddg.example/1?a=1&b=2",
    ]


def _found_shout(s: Subjects, resp: Any) -> None:
    assert resp.data == {"discovered": ["shout"]}, resp.text


def _all_mcp_tools(s: Subjects, tools: Any) -> None:
    assert sorted(t.name for t in tools) == sorted(t.name for t in s.mcp.values())


def _unknown_tool(s: Subjects, resp: Any) -> None:
    assert resp.is_error and resp.text.startswith("Error: tool 'nope' does not exist"), resp.text


def _agent_answer(s: Subjects, result: Any) -> None:
    assert result.final_output == "done"
    assert [(r.name, r.output) for r in result.tool_calls] == [("shout", "HI")]


def _scripted(s: Subjects, resp: Any) -> None:
    assert resp.content == "scripted"


def _from_http(s: Subjects, resp: Any) -> None:
    assert resp.content == "from http"


def _agent(s: Subjects) -> Coroutine:
    llm = ScriptedLLM([ScriptedLLM.tool_call("shout", {"word": "hi"}), "done"])
    return Agent("a", llm, tools=[shout]).arun("go")


Check = Callable[[Subjects, Any], None]
SUBJECTS: dict[str, tuple[Callable[[Subjects], Coroutine], Check]] = {
    "Calculator.arun": (lambda s: CalculatorTool().arun({"expression": "6 * 7"}), _text("42")),
    "Notes.arun": (lambda s: s.notes.arun({"action": "read", "path": "todo.md"}), _text(NOTE)),
    "CLITool.arun": (lambda s: s.cli.arun({"command": "echo hi"}), _text("[exit code 0]\nstdout:\nhi")),
    "Search.arun": (lambda s: s.search.arun({"query": "rust"}), _search_hits),
    "@tool sync.arun": (lambda s: shout.arun({"word": "hi"}), _text("HI")),
    "@tool async.arun": (lambda s: echo_later.arun({"word": "hi"}), _text("echo hi")),
    "run-only Tool.arun": (lambda s: OnlyRun().arun({"word": "ab"}), _text("AB")),
    "arun-only Tool.arun": (lambda s: OnlyArun().arun({"word": "ab"}), _text("ba")),
    "ToolSearchTool.arun": (lambda s: s.tool_search.arun({"query": "upper-case a word"}), _found_shout),
    "MCPTool.arun": (lambda s: s.mcp["add"].arun({"a": 40, "b": 2}), _text("42")),
    "MCPClient.load_tools": (lambda s: s.client.load_tools(), _all_mcp_tools),
    "aexecute_tool, sync @tool": (lambda s: s.registry.aexecute_tool("shout", {"word": "hi"}), _text("HI")),
    "aexecute_tool, async @tool": (
        lambda s: s.registry.aexecute_tool("echo_later", {"word": "hi"}),
        _text("echo hi"),
    ),
    "aexecute_tool, MCP tool": (lambda s: s.registry.aexecute_tool("calc_add", {"a": 1, "b": 2}), _text("3")),
    "aexecute_tool, unknown tool": (lambda s: s.registry.aexecute_tool("nope", {}), _unknown_tool),
    "Agent.arun": (_agent, _agent_answer),
    "ScriptedLLM.achat": (lambda s: ScriptedLLM(["scripted"]).achat([]), _scripted),
    "LLMClient.achat": (lambda s: s.llm.achat([{"role": "user", "content": "x"}]), _from_http),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("subject", list(SUBJECTS))
def test_every_async_method_is_a_coroutine_for_every_entry_point(
    subjects: Subjects, subject: str, entry: str
):
    make, check = SUBJECTS[subject]
    coro = make(subjects)  # no loop runs here
    assert inspect.iscoroutine(coro), type(coro)
    check(subjects, ENTRY_POINTS[entry](coro))


# --- cancellation reaches the tool ------------------------------------------------------------


async def _cancel_through(how: str, coro: Coroutine, started: Callable[[], Coroutine]) -> None:
    """Runs ``coro`` through ``how`` and cancels it once ``started()`` returns, checking that the
    caller sees the cancellation the way that entry point reports it. ``started`` must not wait
    on the loop's clock (wait_for's is held still until it returns)."""
    loop = asyncio.get_running_loop()
    if how in ("task.cancel", "gather.cancel"):
        running = loop.create_task(coro) if how == "task.cancel" else asyncio.gather(coro)
        await started()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    elif how == "wait_for":
        with pytest.raises(TimeoutError):  # it had started before it was given up on
            await wait_for_once_started(coro, started, 1.0)
    elif how == "asyncio.timeout":
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(None) as deadline:

                async def expire() -> None:
                    await started()
                    deadline.reschedule(loop.time())

                expiring = loop.create_task(expire())
                await coro
        await expiring
    elif how == "TaskGroup":

        async def sibling_fails() -> None:
            await started()
            raise KeyError("sibling")

        with pytest.raises(ExceptionGroup) as caught:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(coro)
                tg.create_task(sibling_fails())
        assert caught.group_contains(KeyError)
    else:
        raise AssertionError(how)


CANCELLERS = ["task.cancel", "gather.cancel", "wait_for", "asyncio.timeout", "TaskGroup"]


@pytest.mark.parametrize("how", CANCELLERS)
@pytest.mark.parametrize("via", ["arun", "aexecute_tool", "Agent.arun"])
def test_cancelling_reaches_an_async_tool(how: str, via: str):
    seen: list[str] = []
    began = asyncio.Event()

    @tool
    async def wait_forever(label: str) -> str:
        """Wait until cancelled."""
        began.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append(f"cancelled {label}")
            raise
        return "never"

    params = {"label": via}
    if via == "arun":
        coro = wait_forever.arun(params)
    elif via == "aexecute_tool":
        reg = ToolRegistry()
        reg.register(wait_forever)
        coro = reg.aexecute_tool("wait_forever", params)
    else:
        llm = ScriptedLLM([ScriptedLLM.tool_call("wait_forever", params), "unreached"])
        coro = Agent("a", llm, tools=[wait_forever]).arun("go")
    assert inspect.iscoroutine(coro)

    asyncio.run(_cancel_through(how, coro, began.wait))
    assert seen == [f"cancelled {via}"]


def _sleepers(seconds: str) -> list[int]:
    """The pids of ``sleep <seconds>`` processes."""
    return [p.pid for p in processes() if p.argv[1:] == [seconds.encode()] and p.argv[0].endswith(b"sleep")]


@pytest.mark.parametrize("how", CANCELLERS)
@pytest.mark.parametrize("via", ["arun", "aexecute_tool"])
def test_cancelling_kills_a_commands_process(subjects: Subjects, how: str, via: str):
    # Unique per test and per test process, so other `sleep` commands on the machine never count.
    seconds = f"{30 + CANCELLERS.index(how)}.{os.getpid():07d}{1 if via == 'arun' else 2}"
    params = {"command": f"sleep {seconds}"}
    if via == "arun":
        coro = subjects.cli.arun(params)
    else:
        reg = ToolRegistry()
        reg.register(subjects.cli)
        coro = reg.aexecute_tool("shell", params)
    assert inspect.iscoroutine(coro)
    pids: list[int] = []

    def running() -> None:
        deadline = time.monotonic() + 30
        while not pids:
            pids.extend(_sleepers(seconds))
            assert time.monotonic() < deadline, f"sleep {seconds} never started"
            time.sleep(0.01)

    asyncio.run(_cancel_through(how, coro, lambda: asyncio.to_thread(running)))
    assert pids
    deadline = time.monotonic() + 10
    while _sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _sleepers(seconds) == [], f"sleep {seconds} is still running"


def test_cancelling_an_mcp_call_cancels_it_at_the_server(subjects: Subjects, tmp_path: Path):
    """Through every canceller, by arun and by aexecute_tool: the slow tool never writes its
    marker, and the same client answers afterwards."""
    slow = subjects.mcp["slow_write"]
    markers: list[Path] = []

    def call(via: str, how: str) -> Coroutine:
        marker = tmp_path / f"{via}-{how}"
        markers.append(marker)
        params = slow_write_args(marker, 1.5)
        if via == "arun":
            return slow.arun(params)
        return subjects.registry.aexecute_tool(slow.name, params)

    calls = [(how, call(via, how)) for via in ("arun", "aexecute_tool") for how in CANCELLERS]
    assert all(inspect.iscoroutine(c) for _, c in calls)

    async def main() -> None:
        # Each is cancelled once the server runs it.
        for (how, coro), marker in zip(calls, markers, strict=True):
            await _cancel_through(how, coro, lambda marker=marker: until_started(marker))
        await asyncio.sleep(2.0)  # every call would have written its marker by now

    asyncio.run(main())
    assert [m.name for m in markers if m.exists()] == []
    assert asyncio.run(subjects.mcp["add"].arun({"a": 2, "b": 2})).text == "4"


def test_an_unawaited_coroutine_starts_nothing(subjects: Subjects, tmp_path: Path):
    """Like any coroutine: made and closed without running, no command or call is made."""
    marker = tmp_path / "never"
    coros = [
        subjects.mcp["slow_write"].arun({"path": str(marker), "seconds": 0}),
        subjects.registry.aexecute_tool("calc_slow_write", {"path": str(marker), "seconds": 0}),
        subjects.cli.arun({"command": "sleep 41.5"}),
    ]
    for coro in coros:
        assert inspect.iscoroutine(coro)
        coro.close()
    assert asyncio.run(subjects.mcp["add"].arun({"a": 1, "b": 1})).text == "2"
    assert not marker.exists() and _sleepers("41.5") == []


def test_a_misdefined_tool_raises_where_it_is_awaited():
    class Neither(Tool):
        def __init__(self) -> None:
            super().__init__("neither", "Nothing.")

    coro = Neither().arun({})
    assert inspect.iscoroutine(coro)
    with pytest.raises(NotImplementedError, match="implements neither run"):
        asyncio.run(coro)
