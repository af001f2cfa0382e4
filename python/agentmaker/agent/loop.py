"""The agent loop: ask the model, run the tools it calls through the gates, feed results back.

``Agent.run`` and ``Agent.arun`` share one coroutine. ``run`` steps it by hand and only starts a
(reused, per-thread) event loop when something really has to wait: see ``sync_driver``. On the sync
path, sync tools run inline on the calling thread; on the async path they run on worker threads
so the event loop is never blocked.

Every tool call goes through the call pipeline in the Rust core (``_native.CallPipeline``):
it reads the calls of a response, runs the gates, and words every outcome for the model;
``tool_calls`` hosts confirmation, threads, asyncio and timeouts.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, overload

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
from agentmaker.agent.agent_tool import AgentTool
from agentmaker.agent.approval import Approval
from agentmaker.agent.events import (
    LLMEnd,
    LLMStart,
    RunEnd,
    RunEvent,
    RunStart,
    TextDelta,
    ToolStart,
    check_hooks,
    hooks_observer,
    tool_end,
)
from agentmaker.agent.hand_over import hand_kind, hand_over
from agentmaker.agent.messages import ContentPart, Message, RunInput, history_messages, input_messages
from agentmaker.agent.pause import Decision, pending_of
from agentmaker.agent.resume import Resuming
from agentmaker.agent.run_policy import DEFAULT_MAX_RETRIES, RunPolicy, before_deadline, retries_exceeded
from agentmaker.agent.run_result import PendingCall, RunResult, RunUsage
from agentmaker.agent.run_setup import new_run
from agentmaker.agent.streaming import Feed, event_stream, streamed_chat, sync_stream
from agentmaker.agent.sync_driver import NEED_LOOP, in_running_loop, loop_hidden, run_sync
from agentmaker.agent.tool_calls import ToolExecutor, _Run, account_usage
from agentmaker.agent.tool_instructions import ToolInstructions
from agentmaker.agent.tool_offer import ToolOffer
from agentmaker.agent.typed_output import OutputSpec
from agentmaker.errors import GuardrailTripped
from agentmaker.llm.client import LLMResponse
from agentmaker.llm.dispatch import chat_method
from agentmaker.rag.budget import check_budget
from agentmaker.rag.tool_search import hide_denied
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.decorator import from_callable
from agentmaker.tools.guardrail_setting import check_guardrails
from agentmaker.tools.registry import ToolRegistry
from agentmaker.tools.status import RunStatus
from agentmaker.tools.toolkit import Toolkit

__all__ = ["Agent", "PendingCall", "RunResult", "RunUsage", "ToolCallRecord"]

DEFAULT_INSTRUCTIONS = "You are a helpful assistant."
EMPTY_REPLY_NUDGE = "Please give a text answer."
NO_ANSWER = "(No valid answer was obtained from the model; please retry.)"
TURNS_EXHAUSTED = "(Max turns reached without a final answer; consider increasing max_turns.)"


def _positive_number(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{what} must be a positive number of seconds or None, got {value!r}")
    return float(value)


def _as_tool(item: Any) -> Any:
    """A ``tools=[...]`` item as a tool: a plain function (or bound method) is inferred exactly
    like ``@tool`` (same schema, same definition-time errors); anything else goes to
    ``register_all`` as it is, which says what is wrong with it."""
    if isinstance(item, (_native.Tool, type)) or not callable(item):
        return item
    return from_callable(item)


class Agent(Resuming, ToolExecutor, ToolOffer):
    """An LLM agent that can call tools.

    ``llm`` is any object meeting the contract in :mod:`agentmaker.llm` (``LLMClient``,
    ``agentmaker.testing.ScriptedLLM``, or your own). Tools come from ``tools`` (a list,
    registered into a new ``ToolRegistry``) or ``tool_registry`` (used as is), not both; with
    neither, the agent answers plainly. ``tools`` may hold plain functions (turned into tools
    as ``@tool`` does, with the same errors) and ``Toolkit`` objects: their tools are registered
    and their ``instructions`` follow the agent's own in the system prompt. The new registry
    keeps the default name rule (``^[a-zA-Z0-9_-]{1,64}$``); for catalog names pass
    ``tool_registry=ToolRegistry(names="catalog")``.

    - ``instructions``: the system prompt (default: a generic helpful-assistant line).
    - ``confirm(tool, parameters) -> bool``: approves high-risk calls; only a return of exactly
      ``True`` approves. It receives a copy of the parameters. It may be ``async``. Without it,
      calls that need confirmation are refused. A confirm that raises refuses. ``"pause"``
      instead: the run pauses on such calls and returns (``status == "paused"``,
      ``result.pending``) until :meth:`resume` gives a person's decisions. An
      :class:`~agentmaker.Approval` adds rules and a limit on refusals around either.
    - ``permissions``: a ``ToolPermissions``; denied tools are hidden from the model and refused
      before confirmation.
    - ``run_policy``: a ``RunPolicy`` applied to every run.
    - ``max_turns``: model calls per run before giving up.
    - ``tool_timeout``: default per-call timeout in seconds (a tool's own ``timeout`` wins).
    - ``max_concurrency``: bound on calls running at once in a parallel batch (default: no bound
      for async tools; sync tools are bounded by the worker threads).
    - ``tool_retriever``: a ``ToolRetriever`` (anything with ``schema_for(query)``): the tools
      offered to the model are the ones it picks for the run's input, and tools a
      ``ToolSearchTool`` call discovers are added for the rest of the run.
    - ``tool_budget``: with a ``tool_retriever``, the most the offered tools' schemas may cost,
      in estimated tokens (``schema_for(query, max_tokens=tool_budget)``; see
      ``agentmaker.rag.estimate_tokens``). Tools a ``ToolSearchTool`` discovers mid-run are the
      model's own request and are added outside it.
    - ``output_type``: the type of the final answer (a dataclass, TypedDict, pydantic model,
      ``Literal``, JSON scalar type...): requested with its JSON Schema, validated, retried when
      invalid, and returned as ``result.output`` (see :mod:`agentmaker.agent.typed_output`).
    - ``input_guardrails``, ``output_guardrails``: callables (sync or async) that check each
      call before its confirmation and each result before the model reads it: they may
      allow, refuse, replace a result or trip (end the run with ``GuardrailTripped``); see
      :mod:`agentmaker.agent.guardrails`.
    - ``hooks``: an object with some of the :class:`~agentmaker.RunHooks` methods, called with
      each event of every run (see :mod:`agentmaker.events`).
    """

    def __init__(
        self,
        name: str,
        llm: Any,
        *,
        tools: Iterable[Any] | None = None,
        tool_registry: Any = None,
        instructions: str | None = None,
        confirm: Callable[[Any, dict[str, Any]], Any] | Literal["pause"] | Approval | None = None,
        permissions: Any = None,
        tool_retriever: Any = None,
        run_policy: RunPolicy | None = None,
        max_turns: int = 10,
        tool_timeout: float | None = None,
        max_concurrency: int | None = None,
        tool_budget: int | None = None,
        hooks: Any = None,
        output_type: Any = None,
        input_guardrails: Any = None,
        output_guardrails: Any = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"Agent name must be a non-empty string, got {name!r}")
        if not callable(getattr(llm, "chat", None)):
            raise TypeError(
                f"llm must have a chat(messages, *, tools=None) method (see agentmaker.llm), got {llm!r}"
            )
        kits: list[Toolkit] = []
        own: list[Any] | None = None  # the tools this agent registered itself, when it did
        if tools is not None and tool_registry is not None:
            raise ValueError("pass either tools=[...] or tool_registry=..., not both")
        if tools is not None:
            if isinstance(tools, ToolRegistry):
                tool_registry = tools
            else:
                if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
                    raise TypeError(f"tools must be a list of tools, got {tools!r}")
                tools = list(tools)
                kits = [t for t in tools if isinstance(t, Toolkit)]
                tool_registry = ToolRegistry()
                own = [_as_tool(t) for x in tools for t in (x.tools if isinstance(x, Toolkit) else [x])]
                tool_registry.register_all(own)
        elif tool_registry is not None and not isinstance(tool_registry, _native.ToolRegistry):
            raise TypeError(f"tool_registry must be a ToolRegistry, got {tool_registry!r}")
        if tool_registry is not None and getattr(llm, "supports_function_calling", True) is False:
            raise ValueError(
                f"{llm!r} does not support function calling, so it cannot be given tools; "
                "use a model with function calling or drop tools="
            )
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns <= 0:
            raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
        if (
            confirm is not None
            and confirm != "pause"
            and not callable(confirm)
            and not isinstance(confirm, Approval)
        ):
            raise TypeError(
                f'confirm must be a callable (tool, parameters) -> bool, an Approval or "pause", got {confirm!r}'
            )
        if permissions is not None and not isinstance(permissions, _native.ToolPermissions):
            raise TypeError(f"permissions must be a ToolPermissions, got {permissions!r}")
        if tool_retriever is not None and not callable(getattr(tool_retriever, "schema_for", None)):
            raise TypeError(
                f"tool_retriever must be a ToolRetriever (it has no schema_for()), got {tool_retriever!r}"
            )
        if tool_budget is not None:
            check_budget(tool_budget, "tool_budget")
            if tool_retriever is None:
                raise ValueError("tool_budget needs a tool_retriever: relevance decides which tools fit")
        if run_policy is not None and not isinstance(run_policy, RunPolicy):
            raise TypeError(f"run_policy must be a RunPolicy, got {run_policy!r}")
        if max_concurrency is not None and (
            isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1
        ):
            raise ValueError(f"max_concurrency must be a positive integer or None, got {max_concurrency!r}")
        if instructions is not None and not isinstance(instructions, str):
            raise TypeError(f"instructions must be a string, got {instructions!r}")
        if hooks is not None:
            check_hooks(hooks)
        self.input_guardrails = check_guardrails(input_guardrails, "input_guardrails")
        self.output_guardrails = check_guardrails(output_guardrails, "output_guardrails")
        self.name = name
        self.llm = llm
        self.hooks = hooks
        self._tool_notes = ToolInstructions(kits, own)
        self.output_type = output_type
        self._output = OutputSpec(output_type) if output_type is not None else None
        self._hooks = hooks_observer(hooks) if hooks is not None else None
        self.tool_registry = tool_registry
        self.instructions = instructions
        self.confirm = confirm
        self.permissions = permissions
        self.tool_retriever = tool_retriever
        self.tool_budget = tool_budget
        self.run_policy = run_policy
        self._max_retries = run_policy.max_retries if run_policy is not None else DEFAULT_MAX_RETRIES
        self.max_turns = max_turns
        self.tool_timeout = _positive_number(tool_timeout, "tool_timeout")
        self.max_concurrency = max_concurrency
        # Permissions are immutable, so a decision per (name, origin) holds for the agent's life.
        self._denials: dict[tuple[str, str | None], str | None] = {}

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, llm={self.llm!r})"

    # ----------------------------------------------------------------------------------- entry points

    # One overload per input form: with a single union parameter a checker cannot tell which
    # TypedDict a list literal such as ``[{"role": "user", "content": "hi"}]`` is meant to be.
    @overload
    def run(
        self, input: str, *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> RunResult: ...
    @overload
    def run(
        self, input: Sequence[Message], *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> RunResult: ...
    @overload
    def run(
        self,
        input: Sequence[ContentPart],
        *,
        message_history: Sequence[Message] | None = None,
        deps: Any = None,
    ) -> RunResult: ...

    def run(
        self, input: RunInput, *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> RunResult:
        """Run the agent to a final answer and return the :class:`RunResult`.

        ``input`` is a string (the user's message), a list of content parts (one user message
        with several parts) or a list of messages sent after the instructions as given: see
        :mod:`agentmaker.agent.messages`. ``message_history`` continues a conversation: its
        messages (e.g. a previous ``result.messages``) go to the model before the input.
        ``deps`` reaches tools through their ``RunContext`` parameter.

        Works in plain scripts and in threads (also while another thread runs an event loop).
        Inside a running event loop use ``await agent.arun(...)`` instead.
        """
        self._no_loop("run", "arun")
        return run_sync(self._drive(input, self._new_run(True, deps=deps), message_history))

    @overload
    async def arun(
        self, input: str, *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> RunResult: ...
    @overload
    async def arun(
        self, input: Sequence[Message], *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> RunResult: ...
    @overload
    async def arun(
        self,
        input: Sequence[ContentPart],
        *,
        message_history: Sequence[Message] | None = None,
        deps: Any = None,
    ) -> RunResult: ...

    async def arun(
        self, input: RunInput, *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> RunResult:
        """The async form of :meth:`run`."""
        return await self._drive(input, self._new_run(False, deps=deps), message_history)

    def resume(
        self,
        result: RunResult,
        decisions: Mapping[str, Decision] | None = None,
        *,
        answers: Mapping[str, str] | None = None,
        digests: Mapping[str, str] | None = None,
        deps: Any = None,
    ) -> RunResult:
        """Continue a paused run (``result.status == "paused"``) with a person's decisions:
        ``{call_id: True | False | "reason shown to the model"}``, one for every call in
        ``result.pending``. Approved calls run, refused ones answer the model with the refusal,
        and the run goes on as :meth:`run` would (it may pause again). See
        :mod:`agentmaker.agent.pause` for the checks, and for ``digests`` (the digests the person
        approved). A ``UserInputTool(mode="pause")`` question (``PendingCall.kind == "question"``)
        gets its answer in ``answers={call_id: text}`` instead. ``deps`` as for :meth:`run` (a
        paused result does not keep them)."""
        self._no_loop("resume", "aresume")
        run = self._new_run(True, deps=deps, run_id=getattr(result, "_run_id", None))
        return run_sync(self._resume(result, decisions, digests, run, answers))

    async def aresume(
        self,
        result: RunResult,
        decisions: Mapping[str, Decision] | None = None,
        *,
        answers: Mapping[str, str] | None = None,
        digests: Mapping[str, str] | None = None,
        deps: Any = None,
    ) -> RunResult:
        """The async form of :meth:`resume`."""
        run = self._new_run(False, deps=deps, run_id=getattr(result, "_run_id", None))
        return await self._resume(result, decisions, digests, run, answers)

    async def astream(
        self, input: RunInput, *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> AsyncIterator[RunEvent]:
        """Run the agent and yield its events as they happen (see :mod:`agentmaker.events`),
        with the model's text as :class:`~agentmaker.TextDelta` pieces; the last event is a
        :class:`~agentmaker.RunEnd` carrying the :class:`RunResult`. A run that fails raises
        its exception after the events it produced. Leaving the loop early cancels the run."""

        def start(feed: Feed) -> Any:
            return self._drive(input, self._new_run(False, feed, deps), message_history)

        async for event in event_stream(start):
            yield event

    def stream(
        self, input: RunInput, *, message_history: Sequence[Message] | None = None, deps: Any = None
    ) -> Iterator[RunEvent]:
        """The blocking form of :meth:`astream` (the run advances as events are asked for)."""
        return sync_stream(self.astream(input, message_history=message_history, deps=deps), "stream")

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        max_depth: int | None = None,
        prompts: dict[str, str] | None = None,
    ) -> AgentTool:
        """This agent as a tool another agent can call (``input``: the task): it runs with its
        own tools and policy inside the calling run, under that run's deadline, cancellation
        and confirmation, adds its usage to it and leaves its transcript in the call's record;
        nesting deeper than ``max_depth`` (default 3) is refused. ``name`` defaults to the
        agent's name. See :mod:`agentmaker.agent.agent_tool`."""
        return AgentTool(self, name=name, description=description, max_depth=max_depth, prompts=prompts)

    @staticmethod
    def _no_loop(name: str, async_name: str) -> None:
        if in_running_loop():
            raise RuntimeError(
                f"Agent.{name}() was called while an event loop is running in this thread; "
                f"use `await agent.{async_name}(...)` instead"
            )

    # ------------------------------------------------------------------------------------- the loop

    def _new_run(
        self,
        sync_entry: bool,
        feed: Feed | None = None,
        deps: Any = None,
        parent: _Run | None = None,
        run_id: str | None = None,
    ) -> _Run:
        return new_run(self, sync_entry, feed, deps, parent, run_id)

    async def _drive(self, input: Any, run: _Run, history: Any) -> RunResult:
        added = input_messages(input)
        earlier = history_messages(history) if history is not None else ()
        messages = run.messages
        messages.append({"role": "system", "content": self._system_prompt(())})
        messages.extend(earlier)
        run.start = len(messages)
        messages.extend(added)
        try:
            if run.observe is not None:
                run.observe(RunStart(self.name, list(added)))
            await self._offer_tools(run)
            return await self._loop(run, 1)
        except BaseException as exc:
            self._failed(run, exc)
            raise

    def _system_prompt(self, tool_notes: tuple[str, ...]) -> str:
        """The agent's instructions, the offered tools' instructions, then the output type's."""
        parts = [self.instructions or DEFAULT_INSTRUCTIONS, *tool_notes]
        if self._output is not None:
            parts.append(self._output.instructions)
        return "\n\n".join(parts)

    def _failed(self, run: _Run, exc: BaseException) -> None:
        """The exception ending a run carries the partial result (transcript and usage)."""
        if getattr(exc, "result", None) is None:
            with contextlib.suppress(Exception):  # an end hook must not hide the run's own error
                exc.result = self._result(run, "", "failed")  # type: ignore[attr-defined]

    async def _loop(self, run: _Run, first_turn: int) -> RunResult:
        chat = chat_method(self.llm, run.sync_entry)
        messages = run.messages
        budget = run.budget
        nudged = False
        for turn in range(first_turn, self.max_turns + 1):
            run.turn = turn
            tools = run.tools
            notes = self._tool_notes.texts(self.tool_registry, tools)
            if notes != run.tool_notes:
                run.tool_notes = notes
                if messages and messages[0].get("role") == "system":
                    messages[0] = {"role": "system", "content": self._system_prompt(notes)}
            if budget is not None:
                budget.admit_llm()
            observe = run.observe
            if run.gate is not None:
                await run.gate()
            if observe is not None:
                observe(LLMStart(turn, messages, len(tools or ())))
                began = time.perf_counter()
            if run.deltas == 2:
                resp = await before_deadline(streamed_chat(self.llm, messages, tools, turn, observe), budget)
            elif run.direct or not run.sync_entry:
                resp = chat(messages, tools=tools) if tools else chat(messages)
            else:
                with loop_hidden():  # a sync client may run its own event loop inside
                    resp = chat(messages, tools=tools) if tools else chat(messages)
            if type(resp) is not LLMResponse and inspect.isawaitable(resp):
                if run.direct:
                    await NEED_LOOP
                    run.direct = False
                resp = await before_deadline(resp, budget)
            content = getattr(resp, "content", None)
            if not isinstance(content, str):
                content = "" if content is None else str(content)
            run.llm_calls += 1
            usage = getattr(resp, "usage", None)
            tokens = 0
            if usage:
                tokens = account_usage(run, usage)
            if budget is not None:
                budget.record_llm(tokens)
            if observe is not None:
                if run.deltas == 1 and content:
                    observe(TextDelta(turn, content))
                observe(LLMEnd(turn, resp, time.perf_counter() - began))
            calls = getattr(resp, "tool_calls", None)
            if not calls:
                text = content.strip()
                if text:
                    messages.append({"role": "assistant", "content": content})
                    if self._output is None:
                        return self._result(run, text, "completed", text)
                    valid, value = self._output.parse(text)
                    if valid:
                        return self._result(run, text, "completed", value)
                    run.retries += 1
                    if run.retries > self._max_retries:
                        raise retries_exceeded(run.retries, self._max_retries, value)
                    messages.append({"role": "user", "content": self._output.retry_message(value)})
                    continue
                if nudged:
                    return self._result(run, NO_ANSWER, "completed")
                nudged = True
                messages.append({"role": "assistant", "content": content})
                messages.append({"role": "user", "content": EMPTY_REPLY_NUDGE})
                continue
            stop = await self._turn(run, resp, content, calls)
            if stop is not None:
                return self._result(run, stop, "stopped")
            if run.retries > self._max_retries:
                last = next(r.output for r in reversed(run.records) if r.status == "retry")
                raise retries_exceeded(run.retries, self._max_retries, last)
            if run.pending:
                return self._result(run, "", "paused")
        return self._result(run, TURNS_EXHAUSTED, "max_turns")

    def _result(self, run: _Run, text: str, status: RunStatus, output: Any = None) -> RunResult:
        usage = run.usage()
        pending: list[PendingCall] = []
        if status == "paused":
            pending = pending_of(run.pending, run.pipeline.digest)
        if output is None and self._output is None and status != "failed":
            output = text
        result = RunResult(
            text,
            status,
            usage,
            run.records,
            run.messages,
            pending,
            output,
            run.todos,
            run.start,
            run.turn,
            run.run_id,
        )
        if run.observe is not None:
            run.observe(RunEnd(result))
        return result

    async def _turn(self, run: _Run, resp: Any, content: str, calls: Any) -> str | None:
        """Run one response's tool calls; returns the final output if a tool stopped the run."""
        pipeline = run.pipeline
        # A reply cut off by the token limit never has its arguments completed.
        recs, groups = pipeline.prepare(calls, run.turn, getattr(resp, "finish_reason", None) == "length")
        extra = getattr(resp, "assistant_message", None)
        assistant = dict(extra) if extra else {}
        assistant.update(role="assistant", content=content)
        assistant["tool_calls"] = [r._wire for r in recs]
        messages = run.messages
        messages.append(assistant)  # type: ignore[arg-type] # a Message plus the provider's extra keys
        run.records.extend(recs)
        for r in recs:
            if r.status is None and (kind := hand_kind(r._tool)):
                hand_over(run, r, kind, self.name, self._permitted if self.permissions is not None else None)
        stop: str | None = None
        observe = run.observe
        for start, end, batch in groups:
            if run.gate is not None:
                await run.gate()
            if observe is not None:
                for r in recs[start:end]:
                    observe(ToolStart(run.turn, r.call_id, r.name, r.arguments))
            try:
                if (checking := self._input_checks(run, recs[start:end])) is not None:
                    await checking
                if batch:
                    await self._batch(run, [r for r in recs[start:end] if r.status is None])
                else:
                    for rec in recs[start:end]:
                        if rec.status is not None:  # refused by a gate
                            continue
                        if rec._route == "inline" and not rec._confirm and run.budget is None:
                            self._inline(run, rec)  # the common case needs no coroutine at all
                        else:
                            await self._alone(run, rec)
                if (checking := self._output_checks(run, recs[start:end])) is not None:
                    await checking
            except GuardrailTripped:
                self._tripped(run, recs, start)
                raise
            for r in recs[start:end]:
                if observe is not None:
                    observe(tool_end(run.turn, r))
                if r.status == "pending":
                    continue  # answered when the run resumes
                data = r.data
                discovered = type(data) is dict and data.get("discovered")
                if discovered and self.permissions is not None:
                    hide_denied(r, self._permitted)  # a tool_search listing must not show denied tools
                    data = r.data
                    discovered = type(data) is dict and data.get("discovered")
                messages.append({"role": "tool", "tool_call_id": r.call_id, "content": r.output})
                if stop is None and r._stop is not None:
                    stop = r._stop
                elif r.status == "retry":
                    run.retries += 1
                if discovered and r.executed:
                    self._expand(run, list(discovered))
            if stop is not None:
                for r in [*(r for r in recs[:end] if r.status == "pending"), *recs[end:]]:
                    pipeline.refuse(r, "skipped")
                    if observe is not None:
                        observe(tool_end(run.turn, r))
                    messages.append({"role": "tool", "tool_call_id": r.call_id, "content": r.output})
                return stop
        run.pending = [r for r in recs if r.status == "pending"]
        return None
