"""Serving a :class:`~agentmaker.ToolRegistry` as an MCP server (``serve_mcp``/``aserve_mcp``).

The protocol is rmcp's server side, in the Rust core (``src/mcp_server``). This module is the
host it hands calls to: each ``tools/call`` runs through the same ``CallPipeline`` and the same
executor as an agent's tool call (validation, permissions, confirmation, timeout, result
conversion), so a client reads exactly the text a model would, with ``isError`` set for every
failure. Calls run concurrently: sync tools on worker threads, async ones on the event loop.

A ``run_policy=`` applies its guardrails, ``max_result_chars`` and ``isolate`` to every served
call, each call being a run of its own (so a trip ends only that call, whose client reads the
guardrail's text as an error); its counting limits do not apply to serving.

Confirmation: a tool with ``requires_confirmation`` runs only after a yes. With ``confirm=``
given, that callback decides (the server's operator policy, as for an Agent); otherwise the
client is asked through MCP elicitation when it declares that capability (an
``elicitation/create`` request for clients up to protocol 2025-11-25; for 2026-07-28 clients,
the Rust side answers the call with an ``input_required`` round and the client's retry brings
the answer); a client that cannot be asked gets a refusal. The tool never runs unconfirmed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import ipaddress
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
from agentmaker.agent.approval import Approval, approval_options, asker
from agentmaker.agent.run_policy import RunPolicy, pipeline_settings
from agentmaker.agent.tool_calls import ToolExecutor, _Run
from agentmaker.errors import GuardrailTripped
from agentmaker.mcp.progress import CURRENT
from agentmaker.mcp.serve_workers import start_workers
from agentmaker.mcp.served_tools import listing, structured
from agentmaker.tools.registry import ToolRegistry, serve_with

__all__ = ["aserve_mcp", "serve_mcp"]

_LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "::1"]
_LOOPBACK_ORIGINS = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
# The statuses of a call that did what it was asked (anything else is served as isError).
_OK = frozenset({"success", "partial", "stopped"})
# How often the registry is looked at for added, removed or replaced tools.
WATCH_INTERVAL = 0.5
# Threads that take calls straight from the server's queue (beside the event loop).
WORKERS = 8


class _WithContext:
    """A call's pipeline whose ``run`` (a sync tool, on a worker thread) runs in the served
    call's context, so the tool's ``report_progress`` finds its call."""

    __slots__ = ("_context", "_inner")

    def __init__(self, inner: Any, context: contextvars.Context) -> None:
        self._inner = inner
        self._context = context

    def run(self, rec: Any) -> None:
        self._context.run(self._inner.run, rec)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _OneCall(ToolExecutor):
    """The agent's executor for one served call (who confirms is the call's ``_Run.confirm``,
    decided per call)."""

    max_concurrency = None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise ValueError(f"host must be an IP address or 'localhost', got {host!r}") from None


def _forget(tasks: dict[int, Any], call_id: int, _task: Any) -> None:
    tasks.pop(call_id, None)


class _Host:
    """Takes the server's calls and runs them; keeps its tool list current."""

    def __init__(
        self,
        registry: Any,
        native: Any,
        permissions: Any,
        confirm: Any,
        tool_timeout: float | None,
        run_policy: RunPolicy | None = None,
    ) -> None:
        self.registry = registry
        self.native = native
        self.permissions = permissions
        self.confirm = confirm
        self.tool_timeout = tool_timeout
        self.policy = run_policy
        # The policy's guardrails (input, output); each tool adds its own.
        self.guards: tuple[tuple[Any, ...], tuple[Any, ...]] = (
            (run_policy.input_guardrails, run_policy.output_guardrails)
            if run_policy is not None
            else ((), ())
        )
        self.output_schemas: dict[str, Any] = {}
        self.fingerprint: Any = None
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def refresh(self) -> None:
        """Publish the tool list when the registry changed since the last look."""
        reg = self.registry
        names = tuple(reg.names())
        fingerprint = (names, tuple(id(reg.get(n)) for n in names))
        if fingerprint == self.fingerprint:
            return
        self.fingerprint = fingerprint
        tools, self.output_schemas = listing(reg, self.permissions)
        self.native.set_tools(json.dumps(tools))

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            self.refresh()

    def _confirm_for(self, call_id: int, can_elicit: bool) -> Any:
        """Who approves a call: the server's ``confirm=`` (an Approval's rules and limit kept),
        else the client through elicitation, else nobody."""
        confirm = self.confirm
        if asker(confirm) is not None or not can_elicit:
            return confirm
        native = self.native

        async def ask(tool: Any, args: dict[str, Any]) -> bool:
            shown = json.dumps(args, ensure_ascii=False, default=str)
            reason = await native.confirm(call_id, f"Allow the tool '{tool.name}' to run with {shown}?")
            return reason is None

        if isinstance(confirm, Approval):
            return Approval(ask, rules=dict(confirm.rules), max_attempts=confirm.max_attempts)
        return ask

    async def _ask(self, call_id: int, pipeline: Any, rec: Any, can_elicit: bool) -> None:
        """A served ``ask_user`` (UserInputTool): the question goes to the client's person when
        the client can be asked; otherwise a callback answers it here, and a pausing one, which
        has no run to pause, is refused."""
        tool = rec._tool
        if can_elicit:
            args = rec._params or {}
            answer, reason = await self.native.ask(call_id, str(args["question"]), args.get("choices"))
            shown = tool._texts.answer(answer) if answer is not None else tool._texts.unanswered(reason)
            pipeline.refuse(rec, "answered", reason=shown)
        elif getattr(tool, "_pauses_run", False):
            pipeline.refuse(rec, "no_elicitation")
        else:
            await _OneCall()._alone(_Run(False, None, pipeline), rec)

    def guarded(self, rec: Any) -> bool:
        """Whether guardrails check this call (then it is finished on the event loop)."""
        tool = rec._tool
        return bool(self.guards[0] or self.guards[1] or tool.input_guardrails or tool.output_guardrails)

    def prepare(self, call_id: int, name: str, arguments: str) -> tuple[Any, Any]:
        """The call's pipeline and its record, through the gates that need no waiting."""
        policy = self.policy
        pipeline = _native.CallPipeline(
            self.registry,
            self.permissions,
            self.tool_timeout,
            False,
            False,
            *pipeline_settings(policy),
            *approval_options(self.confirm),
            bool(self.guards[1]),
        )
        wire = {
            "id": f"mcp-{call_id}",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        recs, _ = pipeline.prepare([wire], 1)
        return pipeline, recs[0]

    def reply(self, call_id: int, name: str, rec: Any) -> None:
        """Send the record's outcome: its text, isError, and the structured result."""
        ok = rec.status in _OK
        data = structured(self.output_schemas.get(name), rec.data, rec.output) if ok else None
        self.native.reply(
            call_id, rec.output, not ok, None if data is None else json.dumps(data, default=str)
        )

    def reply_failure(self, call_id: int, name: str, exc: BaseException) -> None:
        """The server itself failed to run the call: the client reads why; serving goes on."""
        text = _native._serve_failed_text(name, f"{type(exc).__name__}: {exc}")
        self.native.reply(call_id, text, True)

    async def finish(
        self, call_id: int, name: str, pipeline: Any, rec: Any, can_elicit: bool, progress: bool
    ) -> None:
        """Confirm, run and answer an admitted call on the event loop."""
        if progress:  # this task's context: seen by the tool (also on a worker thread)
            CURRENT.set((self.native, call_id, asyncio.get_running_loop()))
        try:
            if rec.status is None and getattr(rec._tool, "_asks_person", False):
                await self._ask(call_id, pipeline, rec, can_elicit)
            elif rec.status is None:
                confirm = self._confirm_for(call_id, can_elicit)
                hosted = _WithContext(pipeline, contextvars.copy_context()) if progress else pipeline
                executor = _OneCall()
                run = _Run(False, None, hosted)
                run.confirm = confirm
                run.guards = self.guards
                try:
                    await executor._guard_inputs(run, [rec])
                    if rec.status is not None:
                        pass  # an input guardrail refused it
                    elif rec._confirm and asker(confirm) is None and pipeline.decide_unasked(rec) is None:
                        pipeline.refuse(rec, "no_elicitation" if not can_elicit else "no_confirm")
                    else:
                        await executor._alone(run, rec)
                    await executor._guard_outputs(run, [rec])
                except GuardrailTripped:
                    pass  # a served call is its own run: the trip ends it, the client reads why
            self.reply(call_id, name, rec)
        except asyncio.CancelledError:
            raise  # the client cancelled: nobody reads a reply
        except Exception as exc:  # noqa: BLE001 - the server keeps serving; the client reads why
            self.reply_failure(call_id, name, exc)

    async def call(self, call_id: int, name: str, arguments: str, can_elicit: bool, progress: bool) -> None:
        try:
            pipeline, rec = self.prepare(call_id, name, arguments)
        except Exception as exc:  # noqa: BLE001 - as in finish
            self.reply_failure(call_id, name, exc)
            return
        await self.finish(call_id, name, pipeline, rec, can_elicit, progress)

    def adopt(
        self, call_id: int, name: str, pipeline: Any, rec: Any, can_elicit: bool, progress: bool
    ) -> None:
        """On the loop: take over a call a worker prepared but cannot finish by itself."""
        self._track(
            call_id, asyncio.create_task(self.finish(call_id, name, pipeline, rec, can_elicit, progress))
        )

    def cancel(self, call_id: int) -> None:
        """On the loop: the client cancelled call ``call_id``."""
        if (running := self.tasks.get(call_id)) is not None:
            running.cancel()

    def _track(self, call_id: int, task: asyncio.Task[None]) -> None:
        self.tasks[call_id] = task
        task.add_done_callback(functools.partial(_forget, self.tasks, call_id))

    async def dispatch(self) -> None:
        """Run every call the server hands to the loop until it stops."""
        while (event := await self.native.next_event()) is not None:
            if event[0] == "call":
                _, call_id, name, arguments, can_elicit, progress = event
                self._track(
                    call_id, asyncio.create_task(self.call(call_id, name, arguments, can_elicit, progress))
                )
            else:
                self.cancel(event[1])

    async def serve(self, until: Any) -> None:
        """Dispatch calls and watch the registry until ``until`` (an awaitable) finishes; a
        failure of the dispatcher itself ends serving with its exception."""
        self.refresh()
        dispatch = asyncio.create_task(self.dispatch())
        start_workers(self, asyncio.get_running_loop(), WORKERS)
        watch = asyncio.create_task(self.watch())
        serving = asyncio.ensure_future(until)
        try:
            await asyncio.wait({serving, dispatch}, return_when=asyncio.FIRST_COMPLETED)
            if dispatch.done():
                dispatch.result()
            serving.result()
        finally:
            self.native.stop()
            for task in (serving, dispatch, watch, *self.tasks.values()):
                task.cancel()
            await asyncio.gather(serving, dispatch, watch, *self.tasks.values(), return_exceptions=True)


def _as_registry(tools: Any) -> Any:
    if isinstance(tools, _native.ToolRegistry):
        return tools
    if isinstance(tools, (list, tuple)):
        reg = ToolRegistry()
        for t in tools:
            reg.register(t)
        return reg
    raise TypeError(f"serve a ToolRegistry or a list of tools, got {type(tools).__name__}")


async def aserve_mcp(
    registry: Any,
    transport: str = "http",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    stateless: bool = False,
    permissions: Any = None,
    confirm: Callable[..., Any] | None = None,
    name: str = "agentmaker",
    version: str | None = None,
    instructions: str | None = None,
    tool_timeout: float | None = None,
    run_policy: RunPolicy | None = None,
    allow_remote: bool = False,
    token: str | None = None,
    authorize: Callable[[str | None], bool] | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    max_request_bytes: int = 4 * 1024 * 1024,
    max_concurrent_calls: int | None = 64,
    on_ready: Callable[[str], Any] | None = None,
) -> None:
    """Serve ``registry`` over MCP until cancelled (HTTP) or until the client leaves (stdio).

    See ``docs/mcp.md`` ("Serving tools") for every option."""
    registry = _as_registry(registry)
    if transport not in ("http", "stdio"):
        raise ValueError(f"transport must be 'http' or 'stdio', got {transport!r}")
    if permissions is not None and not isinstance(permissions, _native.ToolPermissions):
        raise TypeError(f"permissions must be a ToolPermissions, got {type(permissions).__name__}")
    if version is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as package_version

        try:
            version = package_version("agentmaker")
        except PackageNotFoundError:
            version = "0"
    native = _native._McpServer(name, version, instructions, max_concurrent_calls)
    if run_policy is not None and not isinstance(run_policy, RunPolicy):
        raise TypeError(f"run_policy must be a RunPolicy, got {type(run_policy).__name__}")
    served = _Host(registry, native, permissions, confirm, tool_timeout, run_policy)
    served.refresh()  # before any client can connect: the first tools/list sees every tool
    if transport == "stdio":
        await _serve_stdio(served, native, on_ready)
        return
    if not path.startswith("/"):
        raise ValueError(f"path must start with '/', got {path!r}")
    if token is not None and authorize is not None:
        raise ValueError("give token or authorize, not both")
    if not _is_loopback(host):
        if not allow_remote:
            raise ValueError(
                f"serving on {host} would let other machines call these tools; pass allow_remote=True "
                "with token=... (or authorize=...) to do so, or serve on 127.0.0.1"
            )
        if token is None and authorize is None:
            raise ValueError(f"serving on {host} (allow_remote=True) needs token=... or authorize=...")
        if allowed_hosts is None:
            unspecified = ipaddress.ip_address(host).is_unspecified
            if unspecified:
                raise ValueError(
                    f"serving on {host} needs allowed_hosts=[...]: the host names clients use to reach "
                    "this server (checked against the Host header), or ['*'] to accept any"
                )
            allowed_hosts = [*_LOOPBACK_HOSTS, host]
    hosts = [] if allowed_hosts == ["*"] else list(allowed_hosts or _LOOPBACK_HOSTS)
    origins = list(allowed_origins if allowed_origins is not None else _LOOPBACK_ORIGINS)
    if token is not None and not token:
        raise ValueError("token must not be empty")
    bound_host, bound_port = await native.bind_http(
        host, port, path, stateless, hosts, origins, max_request_bytes, token, authorize
    )
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    try:
        if on_ready is not None:
            on_ready(f"http://{shown}:{bound_port}{path}")
    except BaseException:
        native.stop()  # the listener is up: a failing callback must not leave it behind
        raise
    await served.serve(asyncio.Event().wait())


async def _serve_stdio(served: _Host, native: Any, on_ready: Any) -> None:
    """Serve on this process's stdin/stdout, whatever they are (pipes, sockets as Node's
    ``child_process`` gives them, a tty, files). While serving, file descriptor 1 points at
    stderr, so a tool that prints cannot corrupt the protocol stream."""
    sys.stdout.flush()
    read_fd, write_fd = os.dup(0), os.dup(1)
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        if on_ready is not None:
            on_ready("stdio")
        await served.serve(native.serve_stdio(read_fd, write_fd))
    finally:
        with contextlib.suppress(OSError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def serve_mcp(registry: Any, transport: str = "stdio", **options: Any) -> None:
    """Serve ``registry`` over MCP, blocking: until the client closes stdin (stdio) or until
    interrupted (HTTP). Takes the options of :func:`aserve_mcp`."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(aserve_mcp(registry, transport, **options))


serve_with(serve_mcp, aserve_mcp)
