"""The working state of one run, set up from the agent: its call pipeline, budget, guardrails,
observers and who confirms (see ``_Run`` in :mod:`agentmaker.agent.tool_calls`)."""

from __future__ import annotations

import uuid
from typing import Any

import agentmaker._native as _native  # noqa: PLR0402 - the extension module, not a name of the package
from agentmaker.agent.approval import approval_options
from agentmaker.agent.events import RunEvent
from agentmaker.agent.otel import otel_observer
from agentmaker.agent.run_policy import pipeline_settings
from agentmaker.agent.streaming import Feed, has_stream
from agentmaker.agent.tool_calls import _Run

__all__ = ["new_run"]


def new_run(
    agent: Any, sync_entry: bool, feed: Feed | None, deps: Any, parent: _Run | None, run_id: str | None = None
) -> _Run:
    """A run of ``agent``; ``parent`` is the calling run when the agent runs as a tool: its
    limits hold over this run too, and its ``confirm`` decides unless the agent has its own.
    ``run_id``: a resumed run's own (a new run gets a new one)."""
    run_id = run_id or uuid.uuid4().hex
    policy = agent.run_policy
    confirm = agent.confirm
    if confirm is None and parent is not None:
        confirm = parent.confirm
    guards = (
        agent.input_guardrails + (policy.input_guardrails if policy is not None else ()),
        agent.output_guardrails + (policy.output_guardrails if policy is not None else ()),
    )
    exact = policy is not None and policy.has_numeric_cap
    if parent is not None and parent.budget is not None and parent.budget.exact:
        exact = True
    pipeline = _native.CallPipeline(
        agent.tool_registry,
        agent.permissions,
        agent.tool_timeout,
        exact,
        sync_entry,
        *pipeline_settings(policy),
        *approval_options(confirm),
        bool(guards[1]),
        run_id=run_id,
    )
    run = _Run(sync_entry, policy, pipeline, parent)
    run.run_id = run_id
    run.confirm = confirm
    run.guards = guards
    run.deps = deps
    observers = [o for o in (agent._hooks, otel_observer(agent.llm)) if o is not None]
    if feed is not None:
        run.deltas = 2 if has_stream(agent.llm) else 1
        run.gate = feed.ready
        observers.append(feed.put)
    if len(observers) == 1:
        run.observe = observers[0]
    elif observers:

        def observe_all(event: RunEvent) -> None:
            for observe in observers:
                observe(event)

        run.observe = observe_all
    return run
