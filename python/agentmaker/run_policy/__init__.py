"""``agentmaker.run_policy``: kept as an import path; see :mod:`agentmaker.agent.run_policy`."""

from agentmaker.agent.run_policy import RunPolicy

__all__ = ["RunPolicy"]
