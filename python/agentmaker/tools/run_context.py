"""``RunContext``: what a tool may know about the run that called it.

A ``@tool`` function parameter annotated ``RunContext`` (or ``RunContext[MyDeps]``) is filled by
the agent with the calling run's context and never appears in the tool's schema, so the model
neither sees nor sends it. The context holds ``deps`` (whatever was passed as
``agent.run(..., deps=...)``: a database handle, the user's id...), the run's ``run_id``, the
agent's name, the current ``turn``, the ``usage`` so far and the ``messages`` of the
transcript (the live list: read it, do not change it). Called outside an agent run
(``registry.execute_tool``), the parameter receives ``None``. Confirmation callbacks never see
it, and copying the arguments leaves it shared, not copied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from agentmaker._native import _RUN_KEY

if TYPE_CHECKING:
    from agentmaker.agent.messages import Message
    from agentmaker.agent.run_result import RunUsage

__all__ = ["RESUME_KEY", "RUN_KEY", "RunContext"]

# The parameter key under which the agent hands the built-ins that take part in the run what
# they need of it (write_todos and an agent offered as a tool: the RunContext; a model-strategy
# tool_search: its model calls' hand-over; a workspace tool, from the core: the run's id);
# added after validation, it is never in a schema. The core defines it.
RUN_KEY: str = _RUN_KEY
# The key under which a resumed run hands an agent tool its paused sub-agent run and the
# person's decisions on its calls (agentmaker.agent.agent_tool).
RESUME_KEY = "_agentmaker_resume"

DepsT = TypeVar("DepsT")


class RunContext(Generic[DepsT]):
    """The calling run's context, given to tool parameters annotated ``RunContext``."""

    __slots__ = ("_run", "agent", "deps", "run_id")

    def __init__(self, deps: DepsT, run_id: str, agent: str, run: Any) -> None:
        self.deps = deps
        self.run_id = run_id
        self.agent = agent
        self._run = run

    @property
    def turn(self) -> int:
        """The model call the running tool call came from (1 for the first)."""
        return int(self._run.turn)

    @property
    def messages(self) -> list[Message]:
        """The run's transcript so far (the live list)."""
        messages: list[Message] = self._run.messages
        return messages

    @property
    def usage(self) -> RunUsage:
        """The run's usage so far."""
        usage: RunUsage = self._run.usage()
        return usage

    def __copy__(self) -> RunContext[DepsT]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> RunContext[DepsT]:
        return self

    def __repr__(self) -> str:
        return f"RunContext(agent={self.agent!r}, run_id={self.run_id!r}, deps={self.deps!r})"
