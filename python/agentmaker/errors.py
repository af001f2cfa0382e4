"""The agentmaker exception tree.

Every exception the library raises derives from :class:`AgentmakerError`. Errors that concern
tools derive from :class:`ToolError`; programming mistakes made while defining or registering a
tool raise :class:`ToolRegistrationError`, which is also a :class:`ValueError`.

Model mistakes (bad arguments, unknown tools, a tool that raises) are *not* exceptions: they come
back to the model as error ``ToolResponse`` values.
"""

from __future__ import annotations

__all__ = [
    "AgentRunFlow",
    "AgentmakerError",
    "GuardrailTripped",
    "LLMResponseError",
    "RetryAgentRun",
    "RunCancelled",
    "RunLimitExceeded",
    "StopAgentRun",
    "ToolConfigError",
    "ToolDefinitionWarning",
    "ToolError",
    "ToolRegistrationError",
]


class AgentmakerError(RuntimeError):
    """Base class of every exception raised by agentmaker."""


class ToolError(AgentmakerError):
    """Base class of tool-related errors."""


class ToolRegistrationError(ToolError, ValueError):
    """A tool cannot be defined or registered as written (bad name, duplicate, bad schema...).

    The message says what to change.
    """


class ToolDefinitionWarning(UserWarning):
    """A tool definition works but misleads the model: for instance a docstring that describes a
    parameter the function does not have, or leaves one out while describing the others.

    Issued with :func:`warnings.warn` when the tool is defined; the message names the function,
    the parameter and what to change.  Silence it with the usual warning filters.
    """


class ToolConfigError(ToolError, ValueError):
    """A built-in tool was configured with values it cannot use (unknown prompt keys, bad limits)."""


class AgentRunFlow(Exception):
    """Base class of flow-control signals a tool raises to steer the Agent loop.

    The registry lets these propagate instead of turning them into error responses.
    """


class StopAgentRun(AgentRunFlow):
    """Raised by a tool to end the whole agent run now; ``message`` becomes the final output."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = str(message)


class RetryAgentRun(AgentRunFlow):
    """Raised by a tool to hand ``message`` back to the model as the tool's result so it
    reconsiders and tries again; the run continues."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = str(message)


class RunLimitExceeded(AgentmakerError):
    """A RunPolicy cap was reached. ``kind`` is ``"llm_calls"``, ``"tool_calls"``, ``"tokens"``,
    ``"deadline"`` or ``"retries"``. Like every exception that ends a run, it carries the
    partial ``RunResult`` (transcript, tool calls, usage) as ``.result``."""

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


class GuardrailTripped(AgentmakerError):
    """A guardrail tripped: the run ends. ``guardrail`` names it, ``stage`` is ``"input"`` or
    ``"output"``, ``tool_name`` and ``call_id`` say which call it was checking, and like every
    exception that ends a run it carries the partial ``RunResult`` as ``.result``."""

    def __init__(
        self, message: str, *, guardrail: str = "", stage: str = "", tool_name: str = "", call_id: str = ""
    ) -> None:
        super().__init__(message)
        self.guardrail = guardrail
        self.stage = stage
        self.tool_name = tool_name
        self.call_id = call_id


class RunCancelled(AgentmakerError):
    """The RunPolicy's ``cancel`` callback asked the run to stop."""


class LLMResponseError(AgentmakerError):
    """The model endpoint failed or answered with something that is not a usable reply."""

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
