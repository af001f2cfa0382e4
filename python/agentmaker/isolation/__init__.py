"""Process isolation for tools: a timeout that really stops the tool.

``settings`` holds :class:`Isolation` (the limits a tool, a ``Toolkit`` or a ``RunPolicy`` asks
for); ``workers`` the fork-server worker processes that run isolated calls and are stopped on a
timeout or a cancelled run. See :mod:`agentmaker.isolation.workers` and ``docs/security.md``.
"""

from agentmaker.isolation.settings import Isolation
from agentmaker.isolation.workers import warm_up

__all__ = ["Isolation", "warm_up"]
