"""The agentmaker exception tree.

Every exception the library raises derives from :class:`AgentmakerError`. Errors that concern
tools derive from :class:`ToolError`; programming mistakes made while defining or registering a
tool raise :class:`ToolRegistrationError`, which is also a :class:`ValueError`.

Model mistakes (bad arguments, unknown tools, a tool that raises) are *not* exceptions: they come
back to the model as error ``ToolResponse`` values.
"""

from __future__ import annotations

__all__ = [
    "AgentmakerError",
    "ToolError",
    "ToolRegistrationError",
    "ToolConfigError",
    "AgentRunFlow",
]


class AgentmakerError(RuntimeError):
    """Base class of every exception raised by agentmaker."""


class ToolError(AgentmakerError):
    """Base class of tool-related errors."""


class ToolRegistrationError(ToolError, ValueError):
    """A tool cannot be defined or registered as written (bad name, duplicate, bad schema...).

    The message says what to change.
    """


class ToolConfigError(ToolError, ValueError):
    """A built-in tool was configured with values it cannot use (unknown prompt keys, bad limits)."""


class AgentRunFlow(Exception):
    """Base class of flow-control signals a tool raises to steer the Agent loop.

    The registry lets these propagate instead of turning them into error responses.
    """
