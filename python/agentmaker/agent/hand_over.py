"""What an admitted call is handed of its run, after validation and out of the model's sight:

- an ``@tool`` function's ``RunContext`` parameters get the run's context;
- ``TodoTool`` and agent tools (``Agent.as_tool``) get it under ``RUN_KEY`` (the task list lives
  in the run; a sub-agent joins it);
- a model-strategy ``ToolSearchTool`` gets its model calls' hand-over under ``RUN_KEY``
  (:mod:`agentmaker.agent.tool_model_calls`).

The call's record keeps the model's arguments. Which of these a tool takes is decided once per
tool class (an ``@tool`` function's own parameters say whether it takes anything), so a call of
any other tool pays one dictionary lookup.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from agentmaker.agent.agent_tool import AgentTool
from agentmaker.agent.todos import TodoTool
from agentmaker.agent.tool_calls import _Run
from agentmaker.agent.tool_model_calls import hand_model_calls
from agentmaker.rag.tool_search import ToolSearchTool
from agentmaker.tools.call_record import ToolCallRecord
from agentmaker.tools.decorator import FunctionTool
from agentmaker.tools.run_context import RUN_KEY, RunContext

__all__ = ["hand_kind", "hand_over"]

NOTHING, PARAMETERS, CONTEXT, MODEL_CALLS = range(4)
_KINDS: dict[type, int] = {}


def hand_kind(tool: Any) -> int:
    """What calls of ``tool``'s class are handed (one of the constants above)."""
    cls = type(tool)
    kind = _KINDS.get(cls)
    if kind is None:
        if issubclass(cls, FunctionTool):
            kind = PARAMETERS
        elif issubclass(cls, (TodoTool, AgentTool)):
            kind = CONTEXT
        elif issubclass(cls, ToolSearchTool):
            kind = MODEL_CALLS
        else:
            kind = NOTHING
        _KINDS[cls] = kind
    return kind


def hand_over(
    run: _Run, rec: ToolCallRecord, kind: int, agent: str, allowed: Callable[[str], bool] | None
) -> None:
    """Hand the admitted call ``rec`` what its kind takes of ``run`` (``agent``: the agent's
    name, for the context; ``allowed``: its permission check, for a tool search's listing)."""
    if kind == MODEL_CALLS:
        hand_model_calls(run, rec, allowed)
        return
    tool = rec._tool
    names = tool._spec.contexts if kind == PARAMETERS else (RUN_KEY,)
    if not names:
        return
    ctx = run.context
    if ctx is None:
        ctx = run.context = RunContext(run.deps, run.run_id or uuid.uuid4().hex, agent, run)
    params = rec._params
    assert params is not None
    if rec.arguments is params:
        rec.arguments = dict(params)
    for name in names:
        params[name] = ctx
