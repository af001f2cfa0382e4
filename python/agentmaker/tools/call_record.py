"""The record one tool call leaves in a :class:`~agentmaker.RunResult`.

The gates a call passes, their order and every text the model reads in place of a refused
call's result are in the Rust core (``src/executor``); ``agentmaker._native.CallPipeline``
creates and fills these records.
"""

from __future__ import annotations

from typing import Any

from agentmaker.tools.status import ToolCallStatus

__all__ = ["ToolCallRecord"]


class ToolCallRecord:
    """One tool call of a run, as the agent handled it.

    ``status`` is the tool's own status (``success``, ``partial``, ``error``) for calls that ran,
    ``timeout`` for one that overran, ``retry``/``stopped`` for flow-control exceptions, or the
    gate that refused it: ``invalid_call`` (no id or no name), ``invalid_args`` (arguments not
    a JSON object), ``unknown_tool``, ``denied``, ``invalid`` (failed validation),
    ``not_confirmed``, ``guardrail`` (a guardrail refused the call or its result, failed or
    tripped; see ``guardrails``), ``skipped`` (the run stopped before the call's turn reached it), or
    ``pending`` (the run is paused until a person decides; see ``Agent(confirm="pause")``).
    ``duration`` is the execution time in seconds (0.0 for calls that never ran) and ``output``
    the text the model received. ``repairs`` lists what was repaired in the arguments before
    the call ran (``'a': "1" → 1``, ``trailing comma removed``); ``arguments`` are then the
    repaired ones, which the tool received.
    """

    __slots__ = (
        "_call",
        "_confirm",
        "_held",
        "_params",
        "_route",
        "_stop",
        "_timeout",
        "_tool",
        "_wire",
        "arguments",
        "call_id",
        "data",
        "duration",
        "executed",
        "guardrails",
        "name",
        "output",
        "repairs",
        "status",
    )

    def __init__(
        self,
        call_id: str = "",
        name: str = "",
        arguments: Any = None,
        status: ToolCallStatus = None,  # type: ignore[assignment] # None only while a call is pending
        output: str = "",
        wire: Any = None,
        tool: Any = None,
        params: dict[str, Any] | None = None,
        confirm: bool = False,
        timeout: float | None = None,
        route: str | None = None,
        call: Any = None,
    ) -> None:
        self.call_id = call_id
        self.name = name
        self.arguments = arguments
        # Set by the gate that refuses the call or by its execution; every record a RunResult
        # holds has one.
        self.status: ToolCallStatus = status
        self.duration = 0.0
        self.output = output
        self.data: Any = None
        self.executed = False
        self.repairs: list[str] = []
        # Each guardrail's decision on this call (agentmaker.agent.guardrails.GuardrailRecord).
        self.guardrails: list[Any] = []
        # Private working state: the call as the assistant message records it, the tool, the
        # arguments it receives, whether a person must approve, the timeout, where it runs
        # (``inline``, ``thread`` or ``await``), the native prepared call, and the run's final
        # output when this call ends the run.
        self._wire = wire
        self._tool = tool
        self._params = params
        self._confirm = confirm
        self._timeout = timeout
        self._route = route
        self._call = call
        self._stop: str | None = None
        self._held = False  # a returned result waiting for output guardrails

    def __repr__(self) -> str:
        return (
            f"ToolCallRecord(call_id={self.call_id!r}, name={self.name!r}, arguments={self.arguments!r}, "
            f"status={self.status!r}, duration={self.duration:.6f})"
        )
