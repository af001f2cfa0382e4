"""agentmaker: the tool layer for LLM agents, with a Rust core.

Define tools with ``@tool`` or by subclassing :class:`Tool`, collect them in a
:class:`ToolRegistry`, and let an :class:`Agent` call them.
"""

from agentmaker._callable import FunctionTool, ToolFlags, tool
from agentmaker._messages import ContentPart, Message, RunInput
from agentmaker._native import (
    CalculatorTool,
    CLITool,
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
from agentmaker._status import RunStatus, ToolCallStatus, ToolStatus
from agentmaker.agent import Agent, RunResult, RunUsage, ToolCallRecord
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
from agentmaker.llm import LLMClient, LLMResponse
from agentmaker.rag import HybridRetriever, ToolRetriever, ToolSearchTool
from agentmaker.run_policy import RunPolicy

__all__ = [
    "Agent",
    "AgentRunFlow",
    "AgentmakerError",
    "CLITool",
    "CalculatorTool",
    "ContentPart",
    "FunctionTool",
    "HybridRetriever",
    "LLMClient",
    "LLMResponse",
    "LLMResponseError",
    "MCPClient",
    "MCPTool",
    "Message",
    "NotesTool",
    "RetryAgentRun",
    "RunCancelled",
    "RunInput",
    "RunLimitExceeded",
    "RunPolicy",
    "RunResult",
    "RunStatus",
    "RunUsage",
    "SearchTool",
    "StopAgentRun",
    "Tool",
    "ToolCallRecord",
    "ToolCallStatus",
    "ToolConfigError",
    "ToolDefinitionWarning",
    "ToolError",
    "ToolFlags",
    "ToolParameter",
    "ToolPermissions",
    "ToolRegistrationError",
    "ToolRegistry",
    "ToolResponse",
    "ToolRetriever",
    "ToolSearchTool",
    "ToolStatus",
    "cli_confirm",
    "report_progress",
    "tool",
]

__version__ = "0.1.0"
