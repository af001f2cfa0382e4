"""``agentmaker.confirm``: kept as an import path; see :mod:`agentmaker.agent.confirm`."""

from agentmaker.agent.confirm import cli_confirm, mask_secrets

__all__ = ["cli_confirm", "mask_secrets"]
