"""``agentmaker.toolkit``: kept as an import path; ``Toolkit`` lives in :mod:`agentmaker.tools.toolkit`."""

from agentmaker.tools.toolkit import Toolkit

__all__ = ["Toolkit"]
