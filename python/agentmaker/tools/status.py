"""The status values a tool result, a tool call record and a run can take, as ``Literal`` types.

They are plain strings at run time (``result.status == "completed"``); the aliases let a type
checker catch a misspelt status and let a ``match`` statement be checked for exhaustiveness.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

__all__ = ["RunStatus", "ToolCallStatus", "ToolStatus"]

ToolStatus: TypeAlias = Literal["success", "partial", "error"]
"""``ToolResponse.status``: what the tool itself reported."""

ToolCallStatus: TypeAlias = Literal[
    "success",
    "partial",
    "error",
    "timeout",
    "retry",
    "stopped",
    "invalid_call",
    "invalid_args",
    "unknown_tool",
    "denied",
    "invalid",
    "not_confirmed",
    "guardrail",
    "skipped",
    "pending",
]
"""``ToolCallRecord.status``: the tool's own status for a call that ran, ``timeout``, ``retry`` or
``stopped`` for one that overran or raised a flow-control signal, or the gate that refused it; ``pending`` while a paused run waits on a person's decision."""

RunStatus: TypeAlias = Literal["completed", "stopped", "max_turns", "paused", "failed"]
"""``RunResult.status``: how the run ended (``failed`` only on the partial result an exception
that ended the run carries in ``.result``)."""
