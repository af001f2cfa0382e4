"""Toolkit: grouped tools with a prefix, include/exclude filters and instructions."""

from __future__ import annotations

import pytest
from agentmaker import Agent, CalculatorTool, Toolkit, tool
from agentmaker.testing import ScriptedLLM


@tool(requires_confirmation=True, timeout=5.0)
def refund(order: str) -> str:
    """Refund an order.

    Args:
        order: The order id.
    """
    return f"refunded {order}"


class Billing(Toolkit):
    instructions = "Billing tools act on real money: say the amount before any refund."

    def __init__(self, currency: str, **options):
        self.currency = currency
        super().__init__([self.balance, refund], prefix="billing_", **options)

    def balance(self, customer: str) -> str:
        """A customer's balance.

        Args:
            customer: The customer.
        """
        return f"{customer}: 10 {self.currency}"


def test_a_toolkit_prefixes_its_tools_and_keeps_their_flags():
    kit = Billing("EUR")
    assert [t.name for t in kit.tools] == ["billing_balance", "billing_refund"]
    renamed = kit.tools[1]
    assert renamed.requires_confirmation is True
    assert renamed.timeout == 5.0
    assert renamed.description == "Refund an order."
    assert refund.name == "refund"  # the original tool is not changed
    assert kit.tools[0].func("ana") == "ana: 10 EUR"


def test_the_agent_registers_toolkit_tools_and_adds_their_instructions():
    llm = ScriptedLLM([ScriptedLLM.tool_call("billing_balance", {"customer": "ana"}), "Ana has 10 EUR."])
    agent = Agent("a", llm, tools=[Billing("EUR"), CalculatorTool()], instructions="You help customers.")
    result = agent.run("Balance of ana?")
    assert result.tool_calls[0].output == "ana: 10 EUR"
    assert llm.requests[0].tool_names == ["billing_balance", "billing_refund", "calculator"]
    assert llm.requests[0].messages[0]["content"] == (
        "You help customers.\n\nBilling tools act on real money: say the amount before any refund."
    )


def test_include_and_exclude_filter_by_the_tools_own_names():
    assert [t.name for t in Billing("EUR", include=["refund"]).tools] == ["billing_refund"]
    assert [t.name for t in Billing("EUR", exclude=["refund"]).tools] == ["billing_balance"]
    with pytest.raises(
        ValueError,
        match="Toolkit include names 'refnd', which the toolkit does not have; its tools are 'balance', 'refund'",
    ):
        Billing("EUR", include=["refnd"])
    with pytest.raises(TypeError, match="Toolkit exclude must be a list of tool names"):
        Billing("EUR", exclude="refund")


def test_a_plain_toolkit_keeps_names_and_takes_any_tool():
    kit = Toolkit([CalculatorTool(), refund], name="misc", instructions="Use the calculator for sums.")
    assert kit.name == "misc"
    assert [t.name for t in kit] == ["calculator", "refund"]
    assert kit.tools[1] is refund
    assert len(kit) == 2


def test_a_prefix_cannot_rename_a_tool_object():
    with pytest.raises(
        TypeError, match="prefix 'm_' can only rename function tools; 'calculator' is a CalculatorTool"
    ):
        Toolkit([CalculatorTool()], prefix="m_")


def test_bad_toolkit_arguments_are_refused():
    with pytest.raises(TypeError, match="Toolkit tools must be a list of tools or functions"):
        Toolkit("refund")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Toolkit tools must be tools or functions, got 3"):
        Toolkit([3])  # type: ignore[list-item]
