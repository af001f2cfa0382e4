"""Guardrails: callables that check a tool call before it runs, or its result before the model
reads it.

``input_guardrails=`` and ``output_guardrails=`` are accepted by :class:`~agentmaker.Agent`,
:class:`~agentmaker.RunPolicy` and each tool (``@tool(...)`` or a ``Tool`` subclass's class
attributes). Each guardrail is a callable, sync or ``async``, taking one :class:`ToolCheck` and
returning None (allow) or a :class:`GuardrailDecision`: ``allow()``, ``refuse(message)`` (the
model reads the message instead of a result), ``replace(text)`` (output only: the model reads
``text``, e.g. a redacted result) or ``trip(reason)`` (the run ends with
:class:`~agentmaker.GuardrailTripped`, carrying the partial result). A guardrail that raises
refuses the call (or withholds its result) and the run goes on.

They run in the call pipeline in this order: parse and repair, permissions, validation, input
guardrails, confirmation, the call, output guardrails on the whole result, the
``max_result_chars`` cut, the external-content frame. They guard the calls a model makes (agent
runs and served MCP calls); ``registry.execute_tool`` is the programmer's own direct call and
runs none, as it asks no confirmation. Within a stage the agent's guardrails run
first, then the run policy's, then the tool's; the first refusal or trip ends the stage, and a
replacement is what the next output guardrail sees. Output guardrails see results the tool
returned (success, partial or error), not a timeout or a gate's refusal. Each decision is kept
in ``ToolCallRecord.guardrails`` and in the call's ``ToolEnd`` event.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from agentmaker.agent.sync_driver import NEED_LOOP
from agentmaker.errors import GuardrailTripped
from agentmaker.tools.guardrail_setting import check_guardrails
from agentmaker.tools.run_context import RESUME_KEY, RUN_KEY, RunContext

__all__ = [
    "Guardrail",
    "GuardrailDecision",
    "GuardrailRecord",
    "ToolCheck",
    "call_arguments",
    "check_guardrails",
    "guard_input",
    "guard_output",
]

Stage = Literal["input", "output"]


@dataclass(frozen=True, slots=True)
class ToolCheck:
    """What a guardrail sees: the stage, the call (tool name, a copy of its arguments, its id,
    the tool) and, for output guardrails, the result: its ``output`` text (whole, before the
    cut and the frame), ``status`` (``success``, ``partial`` or ``error``) and ``data``."""

    stage: Stage
    tool_name: str
    arguments: dict[str, Any]
    call_id: str
    tool: Any
    output: str | None = None
    status: str | None = None
    data: Any = None


@dataclass(frozen=True, slots=True)
class GuardrailDecision:
    """A guardrail's answer; make one with :meth:`allow`, :meth:`refuse`, :meth:`replace` or
    :meth:`trip` (returning None allows too)."""

    kind: Literal["allow", "refuse", "replace", "trip"]
    message: str = ""

    @classmethod
    def allow(cls) -> GuardrailDecision:
        return cls("allow")

    @classmethod
    def refuse(cls, message: str) -> GuardrailDecision:
        """Refuse the call (input) or withhold the result (output); the model reads ``message``."""
        return cls("refuse", _text(message, "refuse"))

    @classmethod
    def replace(cls, text: str) -> GuardrailDecision:
        """Output guardrails only: the model reads ``text`` instead of the result."""
        return cls("replace", _text(text, "replace"))

    @classmethod
    def trip(cls, reason: str) -> GuardrailDecision:
        """End the run with :class:`~agentmaker.GuardrailTripped`."""
        return cls("trip", _text(reason, "trip"))


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"GuardrailDecision.{what}() takes a string, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class GuardrailRecord:
    """One guardrail's decision on a call: ``stage``, the guardrail's name, ``decision``
    (``allow``, ``refuse``, ``replace``, ``trip`` or ``error`` when it raised) and its message
    (the exception as ``Type: message`` for ``error``)."""

    stage: Stage
    guardrail: str
    decision: Literal["allow", "refuse", "replace", "trip", "error"]
    message: str = ""


Guardrail = Callable[[ToolCheck], Any]


def _name(guard: Any) -> str:
    return (
        getattr(guard, "__qualname__", None) or getattr(guard, "__name__", None) or type(guard).__qualname__
    )


@dataclass(slots=True)
class _Chain:
    run: Any
    rec: Any
    stage: Stage
    trail: list[GuardrailRecord] = field(default_factory=list)

    async def decide(self, guard: Guardrail, check: ToolCheck) -> GuardrailDecision | BaseException:
        """One guardrail's decision, or the exception it raised."""
        run = self.run
        try:
            answer = guard(check)
            if inspect.isawaitable(answer):
                if run is not None and run.direct:
                    await NEED_LOOP
                    run.direct = False
                answer = await answer
        except Exception as exc:  # noqa: BLE001 - a failing guardrail refuses; the run goes on
            return exc
        if answer is None:
            return GuardrailDecision.allow()
        if not isinstance(answer, GuardrailDecision):
            return TypeError(f"the guardrail returned {answer!r}, not None or a GuardrailDecision")
        if answer.kind == "replace" and self.stage == "input":
            return ValueError(
                "replace() is for output guardrails; an input guardrail may allow, refuse or trip"
            )
        return answer


_HANDED = (RUN_KEY, RESUME_KEY)


def call_arguments(rec: Any) -> dict[str, Any]:
    """A copy of the call's arguments as the tool receives them, for a guardrail or a person to
    judge: without what the agent hands the tool (its ``RunContext`` parameters, a model-strategy
    ``tool_search``'s model calls)."""
    params = rec._params or {}
    return copy.deepcopy(
        {k: v for k, v in params.items() if k not in _HANDED and not isinstance(v, RunContext)}
    )


def _problem(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


async def guard_input(run: Any, pipeline: Any, rec: Any, guards: tuple[Guardrail, ...]) -> None:
    """Input guardrails on an admitted call; a refusal or failure refuses it in the record, a
    trip also raises :class:`~agentmaker.GuardrailTripped`."""
    check = ToolCheck("input", rec.name, call_arguments(rec), rec.call_id, rec._tool)
    await _chain(run, pipeline, rec, "input", guards, check)


async def guard_output(run: Any, pipeline: Any, rec: Any, guards: tuple[Guardrail, ...]) -> None:
    """Output guardrails on a held result, which is then released (cut and framed) by the core."""
    check = ToolCheck(
        "output", rec.name, call_arguments(rec), rec.call_id, rec._tool, rec.output, rec.status, rec.data
    )
    replaced = await _chain(run, pipeline, rec, "output", guards, check)
    if rec._held:
        pipeline.release(rec, replaced)


async def _chain(
    run: Any, pipeline: Any, rec: Any, stage: Stage, guards: tuple[Guardrail, ...], check: ToolCheck
) -> str | None:
    chain = _Chain(run, rec, stage)
    trail: list[GuardrailRecord] = rec.guardrails
    replaced: str | None = None
    for guard in guards:
        name = _name(guard)
        decision = await chain.decide(guard, check)
        if isinstance(decision, BaseException):
            problem = _problem(decision)
            trail.append(GuardrailRecord(stage, name, "error", problem))
            pipeline.guardrail(rec, stage, "fail", problem)
            return None
        trail.append(GuardrailRecord(stage, name, decision.kind, decision.message))
        if decision.kind == "refuse":
            pipeline.guardrail(rec, stage, "refuse", decision.message)
            return None
        if decision.kind == "trip":
            pipeline.guardrail(rec, stage, "trip", decision.message)
            raise GuardrailTripped(
                f"guardrail {name} tripped on tool '{rec.name}' ({stage}): {decision.message}",
                guardrail=name,
                stage=stage,
                tool_name=rec.name,
                call_id=rec.call_id,
            )
        if decision.kind == "replace":
            replaced = decision.message
            check = ToolCheck(
                stage,
                check.tool_name,
                check.arguments,
                check.call_id,
                check.tool,
                replaced,
                check.status,
                check.data,
            )
    return replaced
