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
    "BM25BError",
    "BM25K1Error",
    "ConflictModeError",
    "DuplicateToolError",
    "EmbeddingDimensionError",
    "EmbeddingNotFiniteError",
    "EmptyEmbeddingError",
    "GuardBoundaryCharsError",
    "GuardBoundaryLengthError",
    "GuardHeaderError",
    "GuardrailTripped",
    "IndexParameterError",
    "InvalidToolConfigError",
    "LLMConnectionError",
    "LLMReplyError",
    "LLMRequestError",
    "LLMResponseError",
    "LLMStatusError",
    "LLMTimeoutError",
    "MCPAlreadyConnectedError",
    "MCPCatalogError",
    "MCPClientError",
    "MCPClosedWhileConnectingError",
    "MCPConfigError",
    "MCPForkedError",
    "MCPHandshakeError",
    "MCPHandshakeTimeoutError",
    "MCPListError",
    "MCPListTimeoutError",
    "MCPNotConnectedError",
    "MCPSpawnError",
    "NameRuleError",
    "NotesConfigError",
    "NotesIOError",
    "NotesPermissionError",
    "RetryAgentRun",
    "RunCancelled",
    "RunLimitExceeded",
    "RunPolicyCountError",
    "RunPolicyDeadlineError",
    "StopAgentRun",
    "ToolConfigError",
    "ToolDefinitionWarning",
    "ToolError",
    "ToolNameError",
    "ToolParametersError",
    "ToolRegistrationError",
    "ToolSchemaError",
    "UnknownPromptKeyError",
    "WorkerSetupError",
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


# One class per error variant of the Rust core (``src/error.rs`` and each domain's error enum),
# each a subclass of the class the variant raised before it had its own, so existing ``except``
# clauses keep catching it.

# Registering a tool (RegistrationError).


class ToolNameError(ToolRegistrationError):
    """The tool's name breaks the name rule."""


class DuplicateToolError(ToolRegistrationError):
    """A tool of that name is already registered (and replacing it was not asked for)."""


class ToolSchemaError(ToolRegistrationError):
    """The tool's input schema is not a usable JSON Schema."""


class ToolParametersError(ToolRegistrationError):
    """The tool's parameter list cannot be turned into a schema (duplicate names, bad types...)."""


class NameRuleError(ToolRegistrationError):
    """``ToolRegistry(names=...)`` got a rule other than ``"strict"`` or ``"catalog"``."""


class ConflictModeError(ToolRegistrationError):
    """``register_all(on_conflict=...)`` got a mode other than ``"raise"``, ``"skip"`` or
    ``"overwrite"``."""


# Configuring a built-in (ConfigError).


class UnknownPromptKeyError(ToolConfigError):
    """``prompts=`` named a message key the tool does not have."""


class InvalidToolConfigError(ToolConfigError):
    """A built-in tool's setting has a value it cannot use."""


# The MCP client (McpError): the client itself failed; a tool call never raises these.


class MCPClientError(ToolError):
    """Base class of the MCP client's own failures."""


class MCPConfigError(MCPClientError, ToolConfigError):
    """``MCPClient(...)`` was configured with values it cannot use."""


class MCPAlreadyConnectedError(MCPClientError):
    """The client is already connected."""


class MCPClosedWhileConnectingError(MCPClientError):
    """The client was closed while it was connecting; the server was stopped."""


class MCPNotConnectedError(MCPClientError):
    """The session is not established, or already closed."""


class MCPForkedError(MCPClientError):
    """The client was opened before this process was forked; its connection is the parent's."""


class MCPSpawnError(MCPClientError):
    """The MCP server process could not be started."""


class MCPHandshakeError(MCPClientError):
    """The MCP handshake with the server failed."""


class MCPHandshakeTimeoutError(MCPClientError):
    """The MCP handshake did not finish within the client's timeout."""


class MCPListTimeoutError(MCPClientError):
    """Listing the server's tools did not finish within the client's timeout."""


class MCPListError(MCPClientError):
    """Listing the server's tools failed."""


class MCPCatalogError(MCPClientError):
    """The server's tool list cannot be used as it is (too many tools, clashing names...)."""


# The model client (LlmError).


class LLMStatusError(LLMResponseError):
    """The endpoint answered with an error status (after the retries it was worth)."""


class LLMTimeoutError(LLMResponseError):
    """The connect or read timeout ran out."""


class LLMConnectionError(LLMResponseError):
    """No connection to the endpoint could be made, or it broke."""


class LLMReplyError(LLMResponseError):
    """The endpoint's reply is not one the client can read."""


class LLMRequestError(AgentmakerError, ValueError):
    """The call cannot be sent as given (bad messages, tools or options)."""


# Tool-RAG indexes (RagError).


class IndexParameterError(AgentmakerError, ValueError):
    """Base class of a BM25 index's bad parameters."""


class BM25K1Error(IndexParameterError):
    """``k1`` is not a finite number >= 0."""


class BM25BError(IndexParameterError):
    """``b`` is not a number between 0 and 1."""


class EmbeddingDimensionError(AgentmakerError, ValueError):
    """An embedding's length differs from the index's dimension."""


class EmbeddingNotFiniteError(AgentmakerError, ValueError):
    """An embedding contains NaN or infinity."""


class EmptyEmbeddingError(AgentmakerError, ValueError):
    """An embedding has no dimensions."""


# RunPolicy limits (PolicyError).


class RunPolicyCountError(AgentmakerError, ValueError):
    """A RunPolicy count (``max_llm_calls``, ``max_tool_calls``, ``max_tokens``...) is not a
    usable integer."""


class RunPolicyDeadlineError(AgentmakerError, ValueError):
    """``RunPolicy.deadline_seconds`` is not a positive number."""


# The anti-injection guard (GuardError).


class GuardBoundaryLengthError(AgentmakerError, ValueError):
    """A guard boundary has too few or too many characters."""


class GuardBoundaryCharsError(AgentmakerError, ValueError):
    """A guard boundary has characters other than ASCII letters and digits."""


class GuardHeaderError(AgentmakerError, ValueError):
    """A guard header lacks the ``{boundary}`` placeholder."""


# NotesTool set-up (NotesSetupError) and isolated workers.


class NotesConfigError(ToolConfigError):
    """``NotesTool(...)`` was configured with values it cannot use."""


class NotesPermissionError(PermissionError, ToolError):
    """The notes root cannot be used safely (its permissions let others in)."""


class NotesIOError(OSError, ToolError):
    """The notes root could not be opened or created; ``errno`` says why."""


class WorkerSetupError(OSError, AgentmakerError):
    """An isolated tool's worker process could not set its limits."""
