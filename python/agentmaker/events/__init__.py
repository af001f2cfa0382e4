"""``agentmaker.events``: kept as an import path; the events live in :mod:`agentmaker.agent.events`."""

from agentmaker.agent.events import (
    LLMEnd,
    LLMStart,
    RunEnd,
    RunEvent,
    RunHooks,
    RunStart,
    TextDelta,
    TodoUpdate,
    ToolEnd,
    ToolStart,
)

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
