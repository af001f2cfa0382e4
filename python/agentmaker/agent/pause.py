"""Pausing a run for a person's decision and checking the decisions it resumes with.

With ``Agent(confirm="pause")`` a call that needs confirmation is not run and no callback is
asked: the core marks it ``pending`` and the run ends with ``status == "paused"`` once the
other calls of the same response have run. ``Agent.resume(result, decisions)`` then gives each
pending call its decision, keyed by call id:

- ``True``: the call runs (the confirmation is the decision; every other gate runs again);
- ``False``: refused, the model reads that it was not approved;
- a non-empty string: refused, the model reads the string as the reason.

Every pending call needs a decision, and a decision for an id the result does not wait on is
an error (a typo must not silently refuse a call). Resuming re-prepares each call through the
core and compares its digest with the one the paused result showed: an approval never runs a
call whose tool name or arguments changed in between (say, in a stored result someone edited).
Where the paused result is stored somewhere a person's approval does not control (a queue, a
client), pass ``digests={call_id: digest}`` too: the digests the person was shown. An approval
then holds only when that digest is the paused call's, so a stored result rewritten in between
(arguments and digest both changed) is refused.

A run also pauses on a ``UserInputTool(mode="pause")`` question (``PendingCall.kind ==
"question"``): its answer comes as ``answers={call_id: text}`` (any string; an empty one tells the
model that none was given), never as a decision, and the model reads it as the tool's result.

A run also pauses when an agent it called as a tool (``Agent.as_tool``) pauses: its pending
calls are listed in the caller's ``result.pending`` with the id ``"<call id of the agent
tool>/<id of the call inside>"`` (nested agents add more parts), and resuming the caller
resumes that agent's run first, with the decisions for its calls.

A paused result can be resumed more than once (each resume runs the approved calls again), so
the caller that stores it decides when it is used up.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from agentmaker.agent.run_result import PendingCall, RunResult

__all__ = [
    "Answered",
    "Decision",
    "Item",
    "SubResume",
    "changed_call",
    "checked_decisions",
    "paused_sub_run",
    "pending_of",
    "resume_items",
    "wire_call",
]

Decision: TypeAlias = bool | str
"""A person's decision on a paused call: approve, refuse, or refuse with a reason."""


@dataclass(frozen=True, slots=True)
class Answered:
    """The person's answer to a paused question (``resume(..., answers={call_id: text})``)."""

    text: str


@dataclass(frozen=True, slots=True)
class SubResume:
    """What resumes a paused sub-agent's run: its paused result and one decision (or answer)
    per pending call of it, in order."""

    result: RunResult
    chosen: list[Decision | Answered]


def checked_decisions(
    result: object, decisions: object, digests: object = None, answers: object = None
) -> list[Decision | Answered]:
    """One decision (or answer, for a question) per pending call of ``result``, in order; a
    clear error for anything else."""
    if not isinstance(result, RunResult):
        raise TypeError(f"resume needs the RunResult of a paused run, got {type(result).__name__}")
    if result.status != "paused":
        raise ValueError(f"only a paused run can be resumed; this result's status is {result.status!r}")
    decisions = {} if decisions is None else decisions
    answers = {} if answers is None else answers
    if not isinstance(decisions, Mapping):
        raise TypeError(
            f"decisions must be a dict {{call_id: True | False | reason}}, got {type(decisions).__name__}"
        )
    if not isinstance(answers, Mapping):
        raise TypeError(f"answers must be a dict {{call_id: answer}}, got {type(answers).__name__}")
    ids = {p.id for p in result.pending}
    unknown = [k for k in [*decisions, *answers] if k not in ids]
    if unknown:
        raise ValueError(
            f"decision for unknown call id {unknown[0]!r}; the paused calls are "
            + ", ".join(f"{p.id!r} ({p.tool_name})" for p in result.pending)
        )
    chosen: list[Decision | Answered] = []
    for p in result.pending:
        if p.kind == "question":
            if p.id in decisions:
                raise ValueError(
                    f"paused call {p.id!r} ({p.tool_name}) asks the person a question: give its "
                    "answer in answers={call_id: text}, not a decision"
                )
            if p.id not in answers:
                raise ValueError(
                    f"no answer for paused question {p.id!r} ({p.tool_name}): "
                    f"{str(p.arguments.get('question', ''))[:200]!r}; give it in answers={{call_id: text}}"
                )
            answer = answers[p.id]
            if not isinstance(answer, str):
                raise TypeError(f"the answer for call {p.id!r} must be a string, got {answer!r}")
            chosen.append(Answered(answer))
            continue
        if p.id in answers:
            raise ValueError(
                f"paused call {p.id!r} ({p.tool_name}) awaits an approval, not an answer: give "
                "True, False or a reason in decisions"
            )
        if p.id not in decisions:
            raise ValueError(
                f"no decision for paused call {p.id!r} ({p.tool_name}); give every pending call "
                "True, False or a reason"
            )
        d = decisions[p.id]
        if not (d is True or d is False or (isinstance(d, str) and d.strip())):
            raise TypeError(
                f"the decision for call {p.id!r} must be True, False or a non-empty reason, got {d!r}"
            )
        chosen.append(d)
    if digests is not None:
        _check_digests(result, chosen, digests)
    return chosen


def _check_digests(result: RunResult, chosen: list[Decision | Answered], digests: object) -> None:
    if not isinstance(digests, Mapping):
        raise TypeError(f"digests must be a dict {{call_id: digest}}, got {type(digests).__name__}")
    for p, d in zip(result.pending, chosen, strict=True):
        if d is not True:
            continue
        shown = digests.get(p.id)
        if shown is None:
            raise ValueError(
                f"no digest for approved call {p.id!r} ({p.tool_name}); give the digest the person approved"
            )
        if shown != p.digest:
            raise ValueError(
                f"the approval of call {p.id!r} ({p.tool_name}) was given for digest {shown}, but the "
                f"paused call's digest is {p.digest}; the approval does not hold for it"
            )


def paused_sub_run(record: Any) -> RunResult | None:
    """The paused run of the sub-agent a call started (``Agent.as_tool``), if it paused."""
    data = record.data
    return data if type(data) is RunResult and data.status == "paused" else None


def pending_of(records: list[Any], digest: Any) -> list[PendingCall]:
    """The pending calls of a turn, each with its digest from the core; a sub-agent's pending
    calls take the place of the call that started it."""
    out: list[PendingCall] = []
    for r in records:
        if r.status != "pending":
            continue
        sub = paused_sub_run(r)
        if sub is not None:
            out.extend(
                PendingCall(f"{r.call_id}/{q.id}", q.tool_name, copy.deepcopy(q.arguments), q.digest, q.kind)
                for q in sub.pending
            )
            continue
        kind: Literal["approval", "question"] = (
            "question" if getattr(r._tool, "_pauses_run", False) else "approval"
        )
        out.append(PendingCall(r.call_id, r.name, copy.deepcopy(r.arguments), digest(r), kind))
    return out


Item: TypeAlias = tuple[PendingCall | Any, Decision | Answered | SubResume]


def resume_items(result: RunResult, chosen: list[Decision | Answered]) -> list[Item]:
    """The calls a resume goes on with, in the paused turn's order: each pending call of the run
    with its decision, and each call whose sub-agent paused (its record) with a
    :class:`SubResume` gathering the decisions on that sub-agent's calls."""
    subs = {
        r.call_id: (r, sub) for r in result.tool_calls if r.status == "pending" and (sub := paused_sub_run(r))
    }
    items: list[Item] = []
    taken: dict[str, dict[str, tuple[PendingCall, Decision | Answered]]] = {}
    for p, choice in zip(result.pending, chosen, strict=True):
        owner = next((cid for cid in subs if p.id.startswith(cid + "/")), None)
        if owner is None:
            items.append((p, choice))
            continue
        if owner not in taken:
            taken[owner] = {}
            items.append((subs[owner][0], owner))  # a place held for the SubResume below
        taken[owner][p.id[len(owner) + 1 :]] = (p, choice)
    for i, (item, held) in enumerate(items):
        if isinstance(item, PendingCall):
            continue
        assert isinstance(held, str)
        sub = subs[held][1]
        got = taken[held]
        sub_chosen: list[Decision | Answered] = []
        for q in sub.pending:
            found = got.get(q.id)
            if found is None or (found[0].tool_name, found[0].digest) != (q.tool_name, q.digest):
                raise ValueError(
                    f"paused call {held}/{q.id} ({q.tool_name}) of the agent called by {held!r} is not the "
                    "call that was paused; the approval does not hold for it"
                )
            sub_chosen.append(found[1])
        items[i] = (item, SubResume(sub, sub_chosen))
    return items


def wire_call(item: PendingCall | Any) -> dict[str, Any]:
    """A paused call (or the record of a call whose sub-agent paused) in the shape the model
    sent it, to prepare it again."""
    if isinstance(item, PendingCall):
        call_id, name, arguments = item.id, item.tool_name, item.arguments
    else:
        call_id, name, arguments = item.call_id, item.name, item.arguments
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def changed_call(rec: Any, pending: PendingCall) -> ValueError:
    return ValueError(
        f"paused call {pending.id!r} ({pending.tool_name}) is not the call that was paused: its "
        f"digest was {pending.digest} and is now different; the approval does not hold for it"
    )
