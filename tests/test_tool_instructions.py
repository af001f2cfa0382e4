"""Tool instructions: ``@tool(instructions=...)``, ``Tool.instructions`` and a toolkit's, gathered
into the system prompt for the tools each request offers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agentmaker import (
    Agent,
    Tool,
    Toolkit,
    ToolPermissions,
    ToolRegistrationError,
    ToolRegistry,
    ToolResponse,
    ToolRetriever,
    ToolSearchTool,
    tool,
)
from agentmaker.testing import ScriptedLLM


@tool(instructions="Quote prices in EUR.")
def price(item: str) -> str:
    """Price of an item.

    Args:
        item: The item.
    """
    return f"{item}: 3 EUR"


@tool
def stock(item: str) -> str:
    """Units of an item in stock.

    Args:
        item: The item.
    """
    return f"{item}: 7"


@tool(instructions="Refunds over 100 need a manager.")
def refund(order: str) -> str:
    """Refund an order and send the customer an email.

    Args:
        order: The order id.
    """
    return f"refunded {order}"


class Clock(Tool):
    instructions = "Times are UTC."

    def __init__(self) -> None:
        super().__init__("clock", "The current time.")

    def run(self, parameters: dict[str, Any]) -> ToolResponse:
        return ToolResponse.success("12:00")


def test_the_decorator_and_subclasses_carry_instructions() -> None:
    assert price.instructions == "Quote prices in EUR."
    assert stock.instructions is None
    assert Clock().instructions == "Times are UTC."
    with pytest.raises(
        ToolRegistrationError, match="tool 'f': instructions must be a non-empty string or None, got 3"
    ):

        @tool(instructions=3)  # type: ignore[call-overload]
        def f() -> None:
            """F."""

    kit = Toolkit([price], prefix="shop_")
    assert kit.tools[0].instructions == "Quote prices in EUR."


def agent(llm: ScriptedLLM, **kw: Any) -> Agent:
    kit = Toolkit([stock, price], name="shop", instructions="Shop tools are read-only.")
    return Agent("a", llm, tools=[Clock(), kit], instructions="Be brief.", **kw)


EXPECTED = "Be brief.\n\nTimes are UTC.\n\nShop tools are read-only.\n\nQuote prices in EUR."


def two_turns() -> ScriptedLLM:
    return ScriptedLLM([ScriptedLLM.tool_call("price", {"item": "tea"}), "3 EUR"])


def test_run_gathers_the_offered_tools_instructions_once_each() -> None:
    llm = two_turns()
    agent(llm).run("tea?")
    assert [r.messages[0]["content"] for r in llm.requests] == [EXPECTED, EXPECTED]


def test_arun_gathers_them_too() -> None:
    llm = two_turns()
    asyncio.run(agent(llm).arun("tea?"))
    assert [r.messages[0]["content"] for r in llm.requests] == [EXPECTED, EXPECTED]


def test_stream_gathers_them_too() -> None:
    llm = two_turns()
    list(agent(llm).stream("tea?"))
    assert [r.messages[0]["content"] for r in llm.requests] == [EXPECTED, EXPECTED]


def test_a_toolkit_speaks_only_while_one_of_its_tools_is_offered() -> None:
    llm = ScriptedLLM(["ok"])
    agent(llm, permissions=ToolPermissions(deny=["stock", "price"])).run("hi")
    assert llm.requests[0].messages[0]["content"] == "Be brief.\n\nTimes are UTC."
    llm = ScriptedLLM(["ok"])
    agent(llm, permissions=ToolPermissions(deny=["price"])).run("hi")
    assert (
        llm.requests[0].messages[0]["content"] == "Be brief.\n\nTimes are UTC.\n\nShop tools are read-only."
    )


def test_the_section_follows_registration_order_whatever_the_retriever_picks() -> None:
    reg = ToolRegistry()
    reg.register_all([Clock(), price, refund])
    retriever = ToolRetriever(reg, top_k=2)
    llm = ScriptedLLM(["ok"])
    Agent("a", llm, tool_registry=reg, tool_retriever=retriever, instructions="Hi.").run(
        "refund order 7 email and the price of an item"
    )
    names = llm.requests[0].tool_names
    assert names == ["refund", "price"]  # by relevance: the section still follows registration
    texts = {"price": "Quote prices in EUR.", "refund": "Refunds over 100 need a manager."}
    expected = "\n\n".join(["Hi.", texts["price"], texts["refund"]])
    assert llm.requests[0].messages[0]["content"] == expected


def test_a_discovered_deferred_tool_adds_its_instructions_to_the_next_request() -> None:
    reg = ToolRegistry()
    reg.register(stock)
    reg.register(refund, deferred=True)
    reg.register(ToolSearchTool(ToolRetriever(reg)))
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "refund an order email"}),
            ScriptedLLM.tool_call("refund", {"order": "7"}, call_id="c2"),
            "Refunded.",
        ]
    )
    result = Agent("a", llm, tool_registry=reg, instructions="Hi.").run("refund 7")
    assert llm.requests[0].messages[0]["content"] == "Hi."
    after = "Hi.\n\nRefunds over 100 need a manager."
    assert [r.messages[0]["content"] for r in llm.requests[1:]] == [after, after]
    assert result.messages[0]["content"] == after
