"""The agent: ``loop`` (``Agent``: the model call, the turn, the run), ``tool_calls`` (hosting a
response's tool calls: confirmation, worker threads, asyncio, timeouts, batches), ``run_result``,
``messages`` (the history), ``pause`` and ``resume``, ``events`` and ``otel``, ``streaming``,
``typed_output``, ``tool_offer`` (the tools a run offers), ``run_setup`` (a run's working
state), ``run_policy`` and ``confirm``; ``todos`` (the run's task list) and ``agent_tool`` (an
agent as a tool) are the built-ins that live in a run."""

from agentmaker.agent.loop import Agent
from agentmaker.agent.run_result import PendingCall, RunResult, RunUsage
from agentmaker.tools.call_record import ToolCallRecord

__all__ = ["Agent", "PendingCall", "RunResult", "RunUsage", "ToolCallRecord"]
