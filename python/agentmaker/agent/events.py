"""What can be observed while a run goes on: the events, and the hooks that receive them.

A run reports, in order: :class:`RunStart`; per model call :class:`LLMStart`, the
:class:`TextDelta` pieces of its text (on ``Agent.astream``/``stream`` only) and
:class:`LLMEnd`; per tool call of a response :class:`ToolStart` and :class:`ToolEnd` (with the
:class:`LLMStart`/:class:`LLMEnd` of the tool's own model calls between them, told apart by
their ``call_id``, and a :class:`TodoUpdate` when the call changed the run's task list); and last
:class:`RunEnd`, which carries the :class:`~agentmaker.RunResult`. A call the gates refuse
still gets both tool events (its ``ToolEnd.status`` says which gate), so every call the model
made is reported once.

``Agent(hooks=...)`` takes any object with some of the methods of :class:`RunHooks`
(``on_run_start``, ``on_llm_start``, ``on_llm_end``, ``on_tool_start``, ``on_tool_end``,
``on_todo_update``, ``on_run_end``), each called with the event on the thread that drives the
run; a method that is missing is skipped. A hook that raises is logged on the ``agentmaker.hooks`` logger and the
run goes on, except :class:`~agentmaker.RunCancelled`: a hook raises it to stop the run, which
then ends with that exception (carrying the partial result in ``.result``).
``Agent.astream``/``stream`` yield the same events as objects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from agentmaker.errors import RunCancelled

if TYPE_CHECKING:
    from agentmaker.agent.messages import Message
    from agentmaker.agent.run_result import RunResult
    from agentmaker.tools.status import ToolCallStatus

__all__ = [
    "LLMEnd",
    "LLMStart",
    "RunEnd",
    "RunEvent",
    "RunHooks",
    "RunStart",
    "TextDelta",
    "TodoUpdate",
    "ToolEnd",
    "ToolStart",
]

_log = logging.getLogger("agentmaker.hooks")


@dataclass(frozen=True, slots=True)
class RunStart:
    """A run (or a resumed run) begins. ``input`` holds the messages its input added (empty for
    a resumed run)."""

    agent: str
    input: list[Message]


@dataclass(frozen=True, slots=True)
class LLMStart:
    """A model call is about to be made: ``messages`` is the list sent (do not change it) and
    ``tools`` the number of tools offered.

    A tool's own model call (``ToolSearchTool(strategy="model")``) is reported too, between
    that tool call's :class:`ToolStart` and :class:`ToolEnd`: its ``call_id`` is the id of the
    tool call and ``llm`` the model object the tool called. The agent's own calls have
    ``call_id=None`` and ``llm=None`` (they call ``Agent.llm``)."""

    turn: int
    messages: list[Message]
    tools: int
    call_id: str | None = None
    llm: Any = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text as it arrives (the whole text at once when the model does
    not stream)."""

    turn: int
    text: str


@dataclass(frozen=True, slots=True)
class LLMEnd:
    """A model call returned: ``response`` is its ``LLMResponse``, ``duration`` in seconds.

    ``call_id`` as in :class:`LLMStart`. A tool's own model call that fails (it raises, or the
    run's deadline cuts it short) still ends with an ``LLMEnd``: ``response`` is None and
    ``error`` the exception (the tool goes on without the model)."""

    turn: int
    response: Any
    duration: float
    call_id: str | None = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class ToolStart:
    """The model asked for a tool call; ``arguments`` are as it sent them."""

    turn: int
    call_id: str
    tool_name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ToolEnd:
    """A tool call is over: its status (as ``ToolCallRecord.status``), how long it ran, the
    text the model reads, and what was repaired in its arguments (``ToolCallRecord.repairs``)."""

    turn: int
    call_id: str
    tool_name: str
    arguments: Any
    status: ToolCallStatus
    duration: float
    output: str
    repairs: tuple[str, ...] = ()
    # Each guardrail's decision on the call (agentmaker.agent.guardrails.GuardrailRecord).
    guardrails: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class TodoUpdate:
    """The model changed the run's task list (a ``write_todos`` call, see
    :class:`~agentmaker.TodoTool`): ``todos`` is the whole new list, each item ``{"content",
    "status"}``. It comes between that call's :class:`ToolStart` and :class:`ToolEnd`."""

    turn: int
    todos: list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class RunEnd:
    """The run ended (completed, stopped, out of turns, paused, or failed): its result."""

    result: RunResult


RunEvent: TypeAlias = RunStart | LLMStart | TextDelta | LLMEnd | ToolStart | ToolEnd | TodoUpdate | RunEnd
"""Any event of a run."""


class RunHooks:
    """A base for hooks: every method does nothing; override the ones you need. (Any object
    with some of these methods will do.)"""

    def on_run_start(self, event: RunStart) -> None:
        """The run begins."""

    def on_llm_start(self, event: LLMStart) -> None:
        """A model call is about to be made."""

    def on_llm_end(self, event: LLMEnd) -> None:
        """A model call returned."""

    def on_tool_start(self, event: ToolStart) -> None:
        """A tool call is about to go through the gates and run."""

    def on_tool_end(self, event: ToolEnd) -> None:
        """A tool call is over."""

    def on_todo_update(self, event: TodoUpdate) -> None:
        """The model changed the run's task list."""

    def on_run_end(self, event: RunEnd) -> None:
        """The run ended."""


_METHODS: dict[type, str] = {
    RunStart: "on_run_start",
    LLMStart: "on_llm_start",
    LLMEnd: "on_llm_end",
    ToolStart: "on_tool_start",
    ToolEnd: "on_tool_end",
    TodoUpdate: "on_todo_update",
    RunEnd: "on_run_end",
}


def hooks_observer(hooks: object) -> Callable[[RunEvent], None]:
    """A function that hands each event to the hook method for it (looked up once)."""
    bound = {kind: m for kind, name in _METHODS.items() if callable(m := getattr(hooks, name, None))}

    def observe(event: RunEvent) -> None:
        method = bound.get(type(event))
        if method is None:
            return
        try:
            method(event)
        except RunCancelled:
            raise
        except Exception:  # noqa: BLE001 - a hook's bug is logged, the run goes on
            _log.exception("hook %s raised; the run goes on", _METHODS[type(event)])

    return observe


def tool_end(turn: int, record: Any) -> ToolEnd:
    """The end event of a call, from its record."""
    r = record
    return ToolEnd(
        turn,
        r.call_id,
        r.name,
        r.arguments,
        r.status,
        r.duration,
        r.output,
        tuple(r.repairs),
        tuple(r.guardrails),
    )


def check_hooks(hooks: object) -> None:
    """Refuse an object that has none of the hook methods (a class instead of an instance, a
    misspelt method name...)."""
    if isinstance(hooks, type):
        raise TypeError(
            f"hooks must be an instance, got the class {hooks.__qualname__}; write hooks={hooks.__qualname__}()"
        )
    if not any(callable(getattr(hooks, name, None)) for name in _METHODS.values()):
        raise TypeError(
            f"hooks must have at least one of the methods {', '.join(_METHODS.values())}, got {hooks!r}"
        )
