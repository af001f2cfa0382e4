"""agentmaker: the tool layer for LLM agents, with a Rust core.

Define tools with ``@tool`` or by subclassing :class:`Tool`, collect them in a
:class:`ToolRegistry`, and let an :class:`Agent` call them.
"""

from agentmaker._callable import FunctionTool, ToolFlags, tool
from agentmaker._messages import ContentPart, Message, RunInput, messages_from_json, messages_to_json
from agentmaker._native import (
    CalculatorTool,
    CLITool,
    FetchTool,
    MCPClient,
    MCPTool,
    NotesTool,
    SearchTool,
    Tool,
    ToolParameter,
    ToolPermissions,
    ToolResponse,
)
from agentmaker._progress import report_progress
from agentmaker._registry import ToolRegistry
from agentmaker._run_context import RunContext
from agentmaker._status import RunStatus, ToolCallStatus, ToolStatus
from agentmaker.agent import Agent, PendingCall, RunResult, RunUsage, ToolCallRecord
from agentmaker.builtins import Workspace
from agentmaker.confirm import cli_confirm
from agentmaker.errors import (
    AgentmakerError,
    AgentRunFlow,
    LLMResponseError,
    RetryAgentRun,
    RunCancelled,
    RunLimitExceeded,
    StopAgentRun,
    ToolConfigError,
    ToolDefinitionWarning,
    ToolError,
    ToolRegistrationError,
)
from agentmaker.events import (
    LLMEnd,
    LLMStart,
    RunEnd,
    RunEvent,
    RunHooks,
    RunStart,
    TextDelta,
    ToolEnd,
    ToolStart,
)
from agentmaker.isolation import Isolation
from agentmaker.llm import LLMClient, LLMResponse, LLMStream
from agentmaker.rag import HybridRetriever, ToolRetriever, ToolSearchTool
from agentmaker.run_policy import RunPolicy
from agentmaker.toolkit import Toolkit

__all__ = [
    "Agent",
    "AgentRunFlow",
    "AgentmakerError",
    "CLITool",
    "CalculatorTool",
    "ContentPart",
    "FetchTool",
    "FunctionTool",
    "HybridRetriever",
    "Isolation",
    "LLMClient",
    "LLMEnd",
    "LLMResponse",
    "LLMResponseError",
    "LLMStart",
    "LLMStream",
    "MCPClient",
    "MCPTool",
    "Message",
    "NotesTool",
    "PendingCall",
    "RetryAgentRun",
    "RunCancelled",
    "RunContext",
    "RunEnd",
    "RunEvent",
    "RunHooks",
    "RunInput",
    "RunLimitExceeded",
    "RunPolicy",
    "RunResult",
    "RunStart",
    "RunStatus",
    "RunUsage",
    "SearchTool",
    "StopAgentRun",
    "TextDelta",
    "Tool",
    "ToolCallRecord",
    "ToolCallStatus",
    "ToolConfigError",
    "ToolDefinitionWarning",
    "ToolEnd",
    "ToolError",
    "ToolFlags",
    "ToolParameter",
    "ToolPermissions",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolResponse",
    "ToolRetriever",
    "ToolSearchTool",
    "ToolStart",
    "ToolStatus",
    "Toolkit",
    "Workspace",
    "cli_confirm",
    "messages_from_json",
    "messages_to_json",
    "report_progress",
    "tool",
]

__version__ = "0.1.0"
