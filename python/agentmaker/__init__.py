"""agentmaker: the tool layer for LLM agents, with a Rust core.

Define tools with ``@tool`` or by subclassing :class:`Tool`, collect them in a
:class:`ToolRegistry`, and let an :class:`Agent` call them.
"""

import agentmaker._hooks  # noqa: F401 - hands the Rust core its hooks, once
from agentmaker._native import Tool, ToolParameter, ToolPermissions, ToolResponse
from agentmaker.agent import Agent, PendingCall, RunResult, RunUsage, ToolCallRecord
from agentmaker.agent.agent_tool import AgentTool
from agentmaker.agent.approval import Approval
from agentmaker.agent.confirm import cli_confirm
from agentmaker.agent.events import (
    LLMEnd,
    LLMStart,
    RunEnd,
    RunEvent,
    RunHooks,
    RunStart,
    TextDelta,
    TodoUpdate,
    ToolEnd,
    ToolStart,
)
from agentmaker.agent.guardrails import GuardrailDecision, ToolCheck
from agentmaker.agent.messages import ContentPart, Message, RunInput, messages_from_json, messages_to_json
from agentmaker.agent.run_policy import RunPolicy
from agentmaker.agent.todos import TodoTool
from agentmaker.builtins import (
    CalculatorTool,
    CLITool,
    FetchTool,
    NotesTool,
    SearchTool,
    SkillsTool,
    UserInputTool,
    Workspace,
)
from agentmaker.errors import (
    AgentmakerError,
    AgentRunFlow,
    GuardrailTripped,
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
from agentmaker.isolation import Isolation
from agentmaker.llm import LLMClient, LLMResponse, LLMStream
from agentmaker.mcp import MCPClient, MCPTool, report_progress
from agentmaker.rag import HybridRetriever, ToolRetriever, ToolSearchTool
from agentmaker.tools import FunctionTool, RunContext, ToolFlags, Toolkit, ToolRegistry, tool
from agentmaker.tools.status import RunStatus, ToolCallStatus, ToolStatus

__all__ = [
    "Agent",
    "AgentRunFlow",
    "AgentTool",
    "AgentmakerError",
    "Approval",
    "CLITool",
    "CalculatorTool",
    "ContentPart",
    "FetchTool",
    "FunctionTool",
    "GuardrailDecision",
    "GuardrailTripped",
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
    "SkillsTool",
    "StopAgentRun",
    "TextDelta",
    "TodoTool",
    "TodoUpdate",
    "Tool",
    "ToolCallRecord",
    "ToolCallStatus",
    "ToolCheck",
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
    "UserInputTool",
    "Workspace",
    "cli_confirm",
    "messages_from_json",
    "messages_to_json",
    "report_progress",
    "tool",
]

__version__ = "0.1.0"
