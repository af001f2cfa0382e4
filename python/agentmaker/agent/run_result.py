"""What a run gives back: :class:`RunResult`, its :class:`RunUsage`, and the calls a paused run
waits on (:class:`PendingCall`), with their JSON form.

A paused result holds everything ``Agent.resume`` needs (the transcript, the records, the
pending calls, the turn it paused on and the usage so far), so ``to_json`` / ``from_json`` let
approval come from another process: the result is stored, a person decides, and any process
with the same agent set up resumes it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from agentmaker.agent.guardrails import GuardrailRecord
from agentmaker.agent.messages import Message, _checked
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.schema.json_values import jsonable
from agentmaker.tools.status import RunStatus

__all__ = ["PendingCall", "RunResult", "RunUsage"]

_FORMAT = 1


@dataclass(frozen=True, slots=True)
class RunUsage:
    """Counts for one run: model calls, tool executions (refused calls excluded), tokens."""

    llm_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call a paused run waits on: a person approves or refuses it by ``id``.

    ``tool_name`` is the tool's real name, ``arguments`` what the model sent, and ``digest``
    the SHA-256 (hex) of the tool name, a NUL byte and the arguments as canonical JSON
    (``json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``); an
    approval holds only for the call with this digest.
    """

    id: str
    tool_name: str
    arguments: dict[str, Any]
    digest: str
    # "approval": a call awaiting a person's decision; "question": a UserInputTool(mode="pause")
    # question awaiting the person's answer (resume(..., answers={id: text})).
    kind: Literal["approval", "question"] = "approval"


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of ``Agent.run``/``arun``/``resume``.

    ``status``: ``completed`` (the model answered, or gave up with the no-answer notice),
    ``stopped`` (a tool raised StopAgentRun or has ``stop_after_tool_call``), ``max_turns``
    (the turn budget ran out; ``final_output`` says so) or ``paused`` (calls await a person's
    decision: see ``pending`` and ``Agent.resume``; ``final_output`` is empty), or ``failed``
    (the partial result an exception that ended the run carries as ``.result``). ``tool_calls``
    lists every call the model made, in order, with its status and duration; ``messages`` is
    the full transcript, and :meth:`new_messages` the part this run added. ``output`` is the
    answer: the final text, or with ``Agent(output_type=T)`` the validated ``T`` (None when the
    run did not complete). ``todos`` is the run's task list as a ``TodoTool`` left it (empty
    without one).
    """

    final_output: str
    status: RunStatus
    usage: RunUsage
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    pending: list[PendingCall] = field(default_factory=list)
    output: Any = None
    todos: list[dict[str, str]] = field(default_factory=list)
    # Where this run's own messages start in ``messages``, and the turn it ended on.
    _start: int = field(default=0, repr=False, compare=False)
    _turn: int = field(default=0, repr=False, compare=False)
    # The run's id (RunContext.run_id), kept so a resumed run is the same run to its tools.
    _run_id: str = field(default="", repr=False, compare=False)

    def __str__(self) -> str:
        return self.final_output

    def new_messages(self) -> list[Message]:
        """The messages this run added to the conversation: its input, the model's replies and
        the tool results (not the instructions nor a ``message_history`` it was given). A
        resumed run's new messages start where the original run's did."""
        return self.messages[self._start :]

    def to_json(self) -> str:
        """The result as JSON text (``RunResult.from_json`` reads it back). A typed ``output``
        is written as its JSON form (and read back as that form); tool data that JSON cannot
        hold is written as its ``str``; a sub-agent's result in a call's ``data`` (see
        ``Agent.as_tool``) is written whole."""
        return json.dumps(self._doc(), ensure_ascii=False, default=str)

    def _doc(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "final_output": self.final_output,
            "status": self.status,
            "usage": asdict(self.usage),
            "tool_calls": [_record_dict(r) for r in self.tool_calls],
            "messages": self.messages,
            "pending": [asdict(p) for p in self.pending],
            "output": _json_form(self.output),
            "todos": self.todos,
            "start": self._start,
            "turn": self._turn,
            "run_id": self._run_id,
        }

    @classmethod
    def from_json(cls, text: str | bytes) -> RunResult:
        """The result :meth:`to_json` wrote. Raises ``ValueError`` for text it did not write."""
        try:
            return cls._from_doc(json.loads(text))
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
            raise ValueError(f"RunResult JSON is malformed: {exc!r}") from None

    @classmethod
    def _from_doc(cls, doc: Any) -> RunResult:
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError("not a RunResult written by RunResult.to_json")
        records = [_record_from(d) for d in doc["tool_calls"]]
        pending = [
            PendingCall(
                str(p["id"]),
                str(p["tool_name"]),
                dict(p["arguments"]),
                str(p["digest"]),
                "question" if p.get("kind") == "question" else "approval",
            )
            for p in doc["pending"]
        ]
        return cls(
            str(doc["final_output"]),
            doc["status"],
            RunUsage(**doc["usage"]),
            records,
            _checked(doc["messages"], "RunResult JSON"),
            pending,
            doc["output"],
            [{"content": str(t["content"]), "status": str(t["status"])} for t in doc.get("todos", ())],
            int(doc["start"]),
            int(doc["turn"]),
            str(doc.get("run_id", "")),
        )


def _json_form(value: Any) -> Any:
    try:
        return jsonable(value)
    except Exception:  # noqa: BLE001 - anything JSON cannot hold is written as text
        return str(value)


def _record_dict(r: ToolCallRecord) -> dict[str, Any]:
    return {
        "call_id": r.call_id,
        "name": r.name,
        "arguments": r.arguments,
        "status": r.status,
        "output": r.output,
        "duration": r.duration,
        "executed": r.executed,
        "data": None if isinstance(r.data, RunResult) else r.data,
        "sub_run": r.data._doc() if isinstance(r.data, RunResult) else None,
        "repairs": list(r.repairs),
        "guardrails": [[g.stage, g.guardrail, g.decision, g.message] for g in r.guardrails],
    }


def _record_from(d: dict[str, Any]) -> ToolCallRecord:
    rec = ToolCallRecord(d["call_id"], d["name"], d["arguments"], d["status"], d["output"])
    rec.duration = float(d["duration"])
    rec.executed = bool(d["executed"])
    rec.data = RunResult._from_doc(d["sub_run"]) if d.get("sub_run") is not None else d["data"]
    rec.repairs = list(d.get("repairs", ()))  # absent from results saved before repairs existed
    rec.guardrails = [GuardrailRecord(*g) for g in d.get("guardrails", ())]
    return rec
