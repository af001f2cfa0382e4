"""One tool call's journey through the agent's gates, and the record it leaves in the RunResult.

Order of the gates for every call the model makes (each failure becomes an error tool message for
the model and the run goes on):

1. well-formed call: an id, a function name, arguments that are a JSON object;
2. the tool exists;
3. permissions (deny wins, then allowlists), before anything else sees the call;
4. argument validation against the tool's schema, so nobody is asked to approve a malformed call;
5. confirmation, only if the tool asks for it for these arguments, and only ``True`` approves;
6. the RunPolicy admits one more execution (exact: a refused call never starts);
7. execution (inline, on a worker thread, or awaited), under the call's timeout;
8. the result text, wrapped against prompt injection when the tool marks it external.
"""

from __future__ import annotations

import json
from typing import Any

from ._status import ToolCallStatus

__all__ = ["ToolCallRecord"]

_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined] # set in __init__, not in the stub


def _loads(text: str) -> Any:
    """``json.loads`` without its per-call wrapper layers for the common compact object."""
    if text[:1] == "{" and text[-1:] == "}":
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            return json.loads(text)  # raises the proper error
        if end == len(text):
            return value
    return json.loads(text)


class ToolCallRecord:
    """One tool call of a run, as the agent handled it.

    ``status`` is the tool's own status (``success``, ``partial``, ``error``) for calls that ran,
    ``timeout`` for one that overran, ``retry``/``stopped`` for flow-control exceptions, or the
    gate that refused it: ``invalid_call`` (no id or no name), ``invalid_args`` (arguments not
    a JSON object), ``unknown_tool``, ``denied``, ``invalid`` (failed validation),
    ``not_confirmed``, ``skipped`` (the run stopped before the call's turn reached it).
    ``duration`` is the execution time in seconds (0.0 for calls that never ran) and ``output``
    the text the model received.
    """

    __slots__ = (
        "_confirm",
        "_kind",
        "_parallel",
        "_params",
        "_stop",
        "_timeout",
        # private working state
        "_tool",
        "_wire",
        "arguments",
        "call_id",
        "data",
        "duration",
        "executed",
        "name",
        "output",
        "status",
    )

    def __init__(self) -> None:
        self.call_id = ""
        self.name = ""
        self.arguments: Any = None
        # Set by the gate that refuses the call or by its execution; every record a RunResult
        # holds has one. None only while the call is being prepared.
        self.status: ToolCallStatus = None  # type: ignore[assignment]
        self.duration = 0.0
        self.output = ""
        self.data: Any = None
        self.executed = False
        self._tool: Any = None
        self._kind = "sync"
        self._params: dict[str, Any] | None = None
        self._confirm = False
        self._parallel = False
        self._timeout: float | None = None
        self._stop: str | None = None
        self._wire: Any = None

    def refuse(self, status: ToolCallStatus, text: str) -> None:
        self.status = status
        self.output = text

    def __repr__(self) -> str:
        return (
            f"ToolCallRecord(call_id={self.call_id!r}, name={self.name!r}, arguments={self.arguments!r}, "
            f"status={self.status!r}, duration={self.duration:.6f})"
        )


def parse_call(call: Any, index: int, turn: int) -> ToolCallRecord:
    """Read the OpenAI-shaped call; refuse it when the shape is wrong."""
    rec = ToolCallRecord()
    if isinstance(call, dict):
        cid = call.get("id")
        fn = call.get("function")
    else:  # SDK objects with attributes
        cid = getattr(call, "id", None)
        fn = getattr(call, "function", None)
        if fn is not None and not isinstance(fn, dict):
            fn = {"name": getattr(fn, "name", None), "arguments": getattr(fn, "arguments", None)}
    if isinstance(fn, dict):
        name = fn.get("name")
        raw = fn.get("arguments")
    else:
        name = raw = None
    rec.name = name if isinstance(name, str) else ""
    rec.arguments = raw
    good_id = isinstance(cid, str) and cid != ""
    rec.call_id = cid if good_id else f"call_missing_id_t{turn}_{index}"
    if good_id and isinstance(call, dict) and isinstance(fn, dict) and (raw is None or isinstance(raw, str)):
        rec._wire = call
    else:
        # Rebuild the call so the assistant message we record is well formed (every tool
        # message must answer an id that appears in it).
        if raw is None or isinstance(raw, str):
            wire_args = raw or ""
        else:
            try:
                wire_args = json.dumps(raw, ensure_ascii=False)
            except (TypeError, ValueError):
                wire_args = repr(raw)
        rec._wire = {
            "id": rec.call_id,
            "type": "function",
            "function": {"name": rec.name, "arguments": wire_args},
        }
    if not good_id:
        rec.refuse(
            "invalid_call",
            f"Error: the call to tool '{rec.name}' has no id; every tool call needs a unique id. "
            "It was not executed.",
        )
        return rec
    if not rec.name:
        rec.refuse("invalid_call", "Error: a tool call has no function name. It was not executed.")
        return rec
    if raw is None or raw == "":
        params: Any = {}
    elif isinstance(raw, str):
        try:
            params = _loads(raw)
        except ValueError:
            rec.refuse("invalid_args", f"Error: arguments for tool '{rec.name}' are not valid JSON")
            return rec
        except RecursionError:  # hostile nesting must not end the run
            rec.refuse("invalid_args", f"Error: arguments for tool '{rec.name}' are nested too deeply")
            return rec
    else:
        params = raw
    if type(params) is not dict:
        if isinstance(params, dict):
            params = dict(params)
        else:
            rec.refuse("invalid_args", f"Error: arguments for tool '{rec.name}' must be a JSON object")
            return rec
    rec._params = params
    rec.arguments = params
    return rec
