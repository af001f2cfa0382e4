"""Deferred tools: registered but offered only once tool_search finds them; tool_search's get."""

from __future__ import annotations

import json

import pytest
from agentmaker import Agent, ToolPermissions, ToolRegistry, ToolRetriever, ToolSearchTool, tool
from agentmaker.testing import ScriptedLLM


@tool
def send_invoice(customer: str, amount: float) -> str:
    """Send an invoice by email to a customer.

    Args:
        customer: The customer's name.
        amount: The amount due.
    """
    return f"invoice of {amount} sent to {customer}"


@tool
def weather(city: str, days: int = 1) -> str:
    """Weather forecast of a city.

    Args:
        city: The city.
        days: How many days ahead.
    """
    return f"{city}: sunny for {days} day(s)"


def registry(**retriever_options):
    reg = ToolRegistry()
    reg.register(weather)
    reg.register(send_invoice, deferred=True)
    reg.register(ToolSearchTool(ToolRetriever(reg, **retriever_options)))
    return reg


def test_a_deferred_tool_is_offered_once_tool_search_finds_it():
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}),
            ScriptedLLM.tool_call("send_invoice", {"customer": "ACME", "amount": 12.5}, call_id="c2"),
            "Sent.",
        ]
    )
    result = Agent("a", llm, tool_registry=registry()).run("Invoice ACME 12.5")
    assert llm.requests[0].tool_names == ["weather", "tool_search"]
    assert llm.requests[1].tool_names == ["weather", "tool_search", "send_invoice"]
    assert "send_invoice" in result.tool_calls[0].output
    assert result.tool_calls[1].output == "invoice of 12.5 sent to ACME"


def test_tool_search_get_returns_one_schema_and_offers_the_tool():
    llm = ScriptedLLM(
        [ScriptedLLM.tool_call("tool_search", {"query": "send_invoice", "action": "get"}), "ok"]
    )
    result = Agent("a", llm, tool_registry=registry()).run("x")
    call = result.tool_calls[0]
    head, schema = call.output.split("\n", 1)
    assert head == "The tool send_invoice (you can call it now), its JSON Schema:"
    function = json.loads(schema)
    assert function["name"] == "send_invoice"
    assert function["parameters"]["required"] == ["customer", "amount"]
    assert call.data == {"discovered": ["send_invoice"]}
    assert llm.requests[1].tool_names == ["weather", "tool_search", "send_invoice"]


@pytest.mark.parametrize(
    ("params", "text"),
    [
        (
            {"query": "no_such_tool", "action": "get"},
            "Error: there is no tool named 'no_such_tool'; use action \"search\" to find tools",
        ),
        ({"query": "tool_search", "action": "get"}, "Error: there is no tool named 'tool_search'"),
        (
            {"query": "x", "action": "delete"},
            "Error: tool 'tool_search' failed parameter validation: parameter 'action'",
        ),
    ],
)
def test_tool_search_get_errors(params, text):
    resp = registry().execute_tool("tool_search", params)
    assert resp.status == "error"
    assert resp.text.startswith(text)


def test_a_direct_call_with_an_unknown_action_is_an_error():
    search = registry().get("tool_search")
    assert (
        search.run({"query": "x", "action": "delete"}).text
        == 'Error: tool_search action must be "search" or "get"'
    )


def test_get_never_shows_a_denied_tool():
    llm = ScriptedLLM(
        [ScriptedLLM.tool_call("tool_search", {"query": "send_invoice", "action": "get"}), "ok"]
    )
    perms = ToolPermissions(deny=["send_invoice"])
    result = Agent("a", llm, tool_registry=registry(), permissions=perms).run("x")
    assert result.tool_calls[0].output.startswith("Error: there is no tool named 'send_invoice'")
    assert "amount" not in result.tool_calls[0].output
    assert "send_invoice" not in llm.requests[1].tool_names


def test_a_retriever_never_picks_a_deferred_tool_at_first():
    reg = registry(always_include=("tool_search",))
    llm = ScriptedLLM(["ok"])
    Agent("a", llm, tool_registry=reg, tool_retriever=ToolRetriever(reg, top_k=3)).run(
        "send an invoice email to ACME"
    )
    assert "send_invoice" not in llm.requests[0].tool_names
    assert "tool_search" in llm.requests[0].tool_names


def test_registering_again_without_deferred_offers_the_tool():
    reg = registry()
    assert reg.deferred == frozenset({"send_invoice"})
    reg.register(send_invoice, overwrite=True)
    assert reg.deferred == frozenset()
    llm = ScriptedLLM(["ok"])
    Agent("a", llm, tool_registry=reg).run("x")
    assert "send_invoice" in llm.requests[0].tool_names
    reg.register(send_invoice, overwrite=True, deferred=True)
    reg.unregister("send_invoice")
    assert reg.deferred == frozenset()
