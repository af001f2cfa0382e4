"""Each core error variant raises its own exception class (``agentmaker.errors``), a subclass of
the class it raised before, so an existing ``except`` clause still catches it. Every class here
is raised by a real trigger."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import textwrap

import pytest
from agentmaker import (
    CalculatorTool,
    CLITool,
    LLMClient,
    LLMResponseError,
    MCPClient,
    NotesTool,
    RunPolicy,
    SearchTool,
    Tool,
    ToolConfigError,
    ToolError,
    ToolParameter,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
    errors,
    tool,
)
from agentmaker._native import Bm25Index, DenseIndex, Guard
from llm_wire_server import Scripted, WireServer, json_reply
from mcp_support import RAW, raw_client, sdk_client
from proc_table import processes

USER = [{"role": "user", "content": "hi"}]


class Named(Tool):
    def __init__(self, name: str = "t", params: list[ToolParameter] | None = None, schema=None) -> None:
        super().__init__(name, "A tool.")
        self._params = params or []
        self._schema = schema

    def get_parameters(self) -> list[ToolParameter]:
        return self._params

    def get_input_schema(self):
        return self._schema

    def run(self, parameters):
        return ToolResponse.success("ok")


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


# registration -------------------------------------------------------------------------------


def test_each_registration_mistake_has_its_class_and_is_still_a_registration_error():
    reg = ToolRegistry()
    reg.register(ping)
    with pytest.raises(ToolRegistrationError) as dup:
        reg.register(ping)
    assert type(dup.value) is errors.DuplicateToolError
    with pytest.raises(ToolRegistrationError) as mode:
        reg.register_all([], on_conflict="merge")
    assert type(mode.value) is errors.ConflictModeError
    with pytest.raises(ToolRegistrationError) as schema:
        reg.register(Named("s", schema={"type": "object", "properties": {"a": {"type": "nonsense"}}}))
    assert type(schema.value) is errors.ToolSchemaError
    twice = [ToolParameter("a", "string", "A."), ToolParameter("a", "string", "A again.")]
    with pytest.raises(ToolRegistrationError) as params:
        reg.register(Named("p", params=twice))
    assert type(params.value) is errors.ToolParametersError
    with pytest.raises(ToolRegistrationError) as name:
        reg.register(Named("has space"))
    assert type(name.value) is errors.ToolNameError
    # ValueError, as before.
    assert isinstance(name.value, ValueError) and reg.names() == ["ping"]


# built-ins' configuration -------------------------------------------------------------------


def test_configuration_errors_have_their_classes(tmp_path):
    with pytest.raises(ToolConfigError) as key:
        CalculatorTool(prompts={"no.such.key": "x"})
    assert type(key.value) is errors.UnknownPromptKeyError
    with pytest.raises(ValueError) as invalid:  # SearchTool raised a plain ValueError here
        SearchTool(max_results=10_000)
    assert type(invalid.value) is errors.InvalidToolConfigError
    with pytest.raises(ToolConfigError) as cli:
        CLITool(allowed_commands=["echo"], timeout=-1)
    assert type(cli.value) is errors.InvalidToolConfigError


def test_notes_setup_errors_keep_their_builtin_bases(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ToolConfigError) as config:
        NotesTool(a_file)
    assert type(config.value) is errors.NotesConfigError
    open_root = tmp_path / "open"
    open_root.mkdir(mode=0o755)
    open_root.chmod(0o755)
    with pytest.raises(PermissionError) as perm:
        NotesTool(open_root)
    assert type(perm.value) is errors.NotesPermissionError
    with pytest.raises(OSError) as io:
        NotesTool(tmp_path / ("x" * 300))  # longer than a file name may be
    assert type(io.value) is errors.NotesIOError and io.value.errno is not None


# the MCP client -----------------------------------------------------------------------------


def test_mcp_configuration_error_is_a_tool_config_error():
    with pytest.raises(ToolConfigError) as e:
        MCPClient(command="a", namespace="x", prompts={"nope": "x"})
    assert type(e.value) is errors.UnknownPromptKeyError
    with pytest.raises(ToolConfigError) as namespace:
        MCPClient(command="a", namespace="not a namespace")
    assert type(namespace.value) is errors.MCPConfigError


async def test_mcp_client_failures_have_their_classes_under_tool_error():
    with pytest.raises(ToolError) as spawn:
        async with MCPClient(command="/no/such/binary", namespace="x"):
            pass
    assert type(spawn.value) is errors.MCPSpawnError
    with pytest.raises(ToolError) as handshake:
        async with MCPClient(command=sys.executable, args=["/nonexistent_server.py"], namespace="x"):
            pass
    assert type(handshake.value) is errors.MCPHandshakeError
    with pytest.raises(ToolError) as slow:
        async with raw_client("silent", timeout=1.0):
            pass
    assert type(slow.value) is errors.MCPHandshakeTimeoutError
    client = sdk_client()
    async with client:
        with pytest.raises(ToolError) as twice:
            await client.__aenter__()
        assert type(twice.value) is errors.MCPAlreadyConnectedError
    with pytest.raises(ToolError) as closed:
        await client.load_tools()
    assert type(closed.value) is errors.MCPNotConnectedError
    async with raw_client("many") as many:
        with pytest.raises(ToolError) as catalog:
            await many.load_tools()
    assert type(catalog.value) is errors.MCPCatalogError
    async with raw_client("silent_listing", timeout=1.0) as silent:
        with pytest.raises(ToolError) as listing_timeout:
            await silent.load_tools()
    assert type(listing_timeout.value) is errors.MCPListTimeoutError
    async with raw_client("refused_listing") as refusing:
        with pytest.raises(ToolError) as listing:
            await refusing.load_tools()
    assert type(listing.value) is errors.MCPListError and "no listing today" in str(listing.value)
    assert all(isinstance(e.value, errors.MCPClientError) for e in (spawn, handshake, slow, catalog))


def _silent_servers() -> list[int]:
    return [p.pid for p in processes() if RAW.encode() in p.argv and b"silent" in p.argv]


async def test_closing_a_client_while_it_connects_has_its_class():
    client = raw_client("silent", timeout=None)
    entering = asyncio.ensure_future(client.__aenter__())
    while not _silent_servers():  # the handshake is under way once the server runs
        await asyncio.sleep(0.01)
    await client.aclose()
    with pytest.raises(ToolError) as closed:
        await entering
    assert type(closed.value) is errors.MCPClosedWhileConnectingError


FORKED = """
import asyncio, os, sys
sys.path.insert(0, {tests!r})
from agentmaker import errors
from mcp_support import sdk_client

async def main():
    client = sdk_client(timeout=10)
    await client.__aenter__()
    pid = os.fork()
    if pid == 0:
        try:  # asyncio sees no running loop in a forked child: run one of its own
            asyncio.run(client.load_tools())
        except errors.ToolError as exc:
            print(type(exc).__name__, flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    await client.aclose()

asyncio.run(main())
"""


def test_a_client_used_after_a_fork_has_its_class(tmp_path):
    tests = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(
        [sys.executable, "-c", FORKED.format(tests=tests)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.split() == ["MCPForkedError"], out.stderr


# the model client ---------------------------------------------------------------------------


def _client(url: str, **kw) -> LLMClient:
    return LLMClient("m", base_url=url, api_key="sk-k", **kw)


def test_model_call_failures_have_their_classes_under_llm_response_error():
    refusing = WireServer([json_reply({"error": {"message": "bad"}}, 400)])
    with refusing as server, pytest.raises(LLMResponseError) as status:
        _client(server.url(), max_retries=0).chat(USER)
    assert type(status.value) is errors.LLMStatusError and status.value.status == 400
    stalled = Scripted(200, {"Content-Type": "application/json"}, chunks=[b'{"choi'], stall=True)
    with WireServer([stalled]) as server, pytest.raises(LLMResponseError) as timeout:
        _client(server.url(), read_timeout=0.3, max_retries=0).chat(USER)
    assert type(timeout.value) is errors.LLMTimeoutError
    garbled = WireServer([Scripted(200, {"Content-Type": "application/json"}, chunks=[b"not json"])])
    with garbled as server, pytest.raises(LLMResponseError) as reply:
        _client(server.url(), max_retries=0).chat(USER)
    assert type(reply.value) is errors.LLMReplyError
    with WireServer([]) as server:
        closed_port_url = server.url()
    with pytest.raises(LLMResponseError) as unreachable:
        _client(closed_port_url, max_retries=0, connect_timeout=2).chat(USER)
    assert type(unreachable.value) is errors.LLMConnectionError


def test_a_call_that_cannot_be_sent_is_a_value_error():
    with WireServer([]) as server, pytest.raises(ValueError) as request:
        LLMClient("m", base_url=server.url(), api_key="sk-k\nInjected: yes").chat(USER)
    assert type(request.value) is errors.LLMRequestError and not server.requests


# indexes, run limits, the guard, isolated workers -------------------------------------------


def test_index_errors_are_value_errors_with_their_classes():
    for args, cls in [((-1.0, 0.75), errors.BM25K1Error), ((1.2, 2.0), errors.BM25BError)]:
        with pytest.raises(ValueError) as e:
            Bm25Index(*args)
        assert type(e.value) is cls
    index = DenseIndex()
    index.add(["a"], [[1.0, 0.0]])
    for vectors, cls in [
        ([[1.0, 0.0, 0.0]], errors.EmbeddingDimensionError),
        ([[math.nan, 0.0]], errors.EmbeddingNotFiniteError),
    ]:
        with pytest.raises(ValueError) as e:
            index.add(["b"], vectors)
        assert type(e.value) is cls
    with pytest.raises(ValueError) as empty:
        DenseIndex().add(["c"], [[]])
    assert type(empty.value) is errors.EmptyEmbeddingError


def test_run_policy_limits_are_value_errors_with_their_classes():
    with pytest.raises(ValueError) as count:
        RunPolicy(max_llm_calls=0)
    assert type(count.value) is errors.RunPolicyCountError
    with pytest.raises(ValueError) as deadline:
        RunPolicy(deadline_seconds=-1)
    assert type(deadline.value) is errors.RunPolicyDeadlineError


def test_guard_errors_are_value_errors_with_their_classes():
    for kwargs, cls in [
        ({"boundary": "short"}, errors.GuardBoundaryLengthError),
        ({"boundary": "x" * 15 + "-"}, errors.GuardBoundaryCharsError),
        ({"header": "no placeholder here"}, errors.GuardHeaderError),
    ]:
        with pytest.raises(ValueError) as e:
            Guard(**kwargs)
        assert type(e.value) is cls


def test_a_worker_that_cannot_set_its_limits_raises_an_os_error():
    # In a child: entering a worker makes the process a group leader and sets its limits.
    script = textwrap.dedent(
        """
        from agentmaker import _native, errors
        try:
            _native._enter_worker(open_files=2**40)
        except OSError as exc:
            print(type(exc).__name__, type(exc) is errors.WorkerSetupError)
        """
    )
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, env=env, timeout=60
    )
    assert out.stdout.split() == ["WorkerSetupError", "True"], out.stderr
