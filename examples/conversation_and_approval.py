"""A conversation over several runs, a risky call paused for a person, and a streamed run.

Runs with no key and no network: ScriptedLLM replays the model's replies.
"""

from __future__ import annotations

import asyncio

from agentmaker import (
    Agent,
    RunEnd,
    RunResult,
    TextDelta,
    ToolEnd,
    messages_from_json,
    messages_to_json,
    tool,
)
from agentmaker.testing import ScriptedLLM


@tool
def lookup_order(order: str) -> str:
    """Find an order's status.

    Args:
        order: The order number.
    """
    return f"order {order}: delivered, 49.90 EUR"


@tool(requires_confirmation=True)
def refund(order: str, amount: float) -> str:
    """Refund an order.

    Args:
        order: The order number.
        amount: How much to refund.
    """
    return f"refunded {amount} EUR on order {order}"


def conversation() -> None:
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("lookup_order", {"order": "A17"}),
            "Order A17 was delivered.",
            "It cost 49.90 EUR.",
        ]
    )
    agent = Agent("support", llm, tools=[lookup_order])
    first = agent.run("Where is order A17?")
    stored = messages_to_json(first.messages)  # e.g. kept in a database between requests
    second = agent.run("How much was it?", message_history=messages_from_json(stored))
    print(f"turn 2 answer: {second.final_output} ({len(second.new_messages())} new messages)")


def approval() -> None:
    llm = ScriptedLLM(
        [ScriptedLLM.tool_call("refund", {"order": "A17", "amount": 49.9}), "The refund is done."]
    )
    agent = Agent("support", llm, tools=[refund], confirm="pause")
    paused = agent.run("Refund order A17")
    pending = paused.pending[0]
    print(f"paused: {pending.tool_name}({pending.arguments}) digest {pending.digest[:12]}...")
    saved = paused.to_json()  # a person approves later, maybe in another process
    result = agent.resume(RunResult.from_json(saved), {pending.id: True})
    print(f"resumed: {result.tool_calls[0].output}; {result.final_output}")


async def streamed() -> None:
    llm = ScriptedLLM([ScriptedLLM.tool_call("lookup_order", {"order": "B2"}), "Order B2 was delivered."])
    async for event in Agent("support", llm, tools=[lookup_order]).astream("Where is B2?"):
        if isinstance(event, ToolEnd):
            print(f"event: {event.tool_name} -> {event.output}")
        elif isinstance(event, TextDelta):
            print(f"event: text {event.text!r}")
        elif isinstance(event, RunEnd):
            print(f"event: run {event.result.status}")


if __name__ == "__main__":
    conversation()
    approval()
    asyncio.run(streamed())
