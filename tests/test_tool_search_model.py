"""ToolSearchTool(strategy="model"): a model chooses the tools, keyword retrieval is the net."""

from __future__ import annotations

import pytest
from agent_support import ENTRY_POINTS, run_by
from agentmaker import (
    Agent,
    LLMResponse,
    RunLimitExceeded,
    RunPolicy,
    ToolRegistry,
    ToolRetriever,
    ToolSearchTool,
    tool,
)
from agentmaker.testing import ScriptedLLM


@tool
def send_invoice(customer: str) -> str:
    """Send an invoice by email to a customer.

    Args:
        customer: The customer's name.
    """
    return f"invoice sent to {customer}"


@tool
def bill_reminder(customer: str) -> str:
    """Remind a customer that a payment is due.

    Args:
        customer: The customer's name.
    """
    return f"reminded {customer}"


@tool
def weather(city: str) -> str:
    """Weather forecast of a city.

    Args:
        city: The city.
    """
    return f"{city}: sunny"


def registry(search_llm, **options):
    reg = ToolRegistry()
    reg.register(weather)
    reg.register(send_invoice, deferred=True)
    reg.register(bill_reminder, deferred=True)
    reg.register(ToolSearchTool(ToolRetriever(reg), strategy="model", llm=search_llm, **options))
    return reg


def answer(content: str, tokens: int = 7) -> LLMResponse:
    return LLMResponse(content=content, model="m", usage={"prompt_tokens": tokens, "completion_tokens": 1})


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_model_chooses_and_its_call_counts_in_the_run(how):
    chooser = ScriptedLLM([answer('Sure: ["bill_reminder"]')])
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "money the customer owes"}),
            ScriptedLLM.tool_call("bill_reminder", {"customer": "ACME"}, call_id="c2"),
            "Reminded.",
        ]
    )
    result = run_by(Agent("a", llm, tool_registry=registry(chooser)), how)
    found = result.tool_calls[0]
    assert found.data == {"discovered": ["bill_reminder"]}
    assert "- bill_reminder:" in found.output and "send_invoice" not in found.output
    assert llm.requests[1].tool_names == ["weather", "tool_search", "bill_reminder"]
    assert result.tool_calls[1].output == "reminded ACME"
    # The catalog's names and descriptions and the query went to the choosing model.
    sent = chooser.requests[0].messages
    assert "money the customer owes" in sent[1]["content"]
    assert "- send_invoice: Send an invoice by email to a customer." in sent[1]["content"]
    assert "tool_search" not in sent[1]["content"]
    assert result.usage.llm_calls == 4 and result.usage.prompt_tokens == 7


@pytest.mark.parametrize(
    "reply",
    [
        answer('["send_invoice", "made_up_tool"]'),
        answer("I would use the invoice tool."),
        RuntimeError("down"),
    ],
)
def test_a_failing_or_inventive_model_falls_back_to_keywords(reply):
    chooser = ScriptedLLM([reply])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}), "ok"])
    result = Agent("a", llm, tool_registry=registry(chooser)).run("go")
    assert result.tool_calls[0].data["discovered"][0] == "send_invoice"
    assert chooser.calls == 1
    assert result.usage.llm_calls == 3


def test_the_model_may_find_none_and_a_shortlist_bounds_what_it_sees():
    chooser = ScriptedLLM([answer("[]")])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "book a flight"}), "ok"])
    result = Agent("a", llm, tool_registry=registry(chooser)).run("go")
    assert result.tool_calls[0].output == "(no relevant tools found)"
    assert chooser.calls == 1
    # With more candidates than the shortlist, keyword retrieval picks the model's candidates.
    chooser = ScriptedLLM([answer('["send_invoice"]')])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "invoice email"}), "ok"])
    result = Agent("a", llm, tool_registry=registry(chooser, shortlist=1)).run("go")
    assert result.tool_calls[0].data == {"discovered": ["send_invoice"]}
    catalog = chooser.requests[0].messages[1]["content"].split("Catalog:\n")[1]
    assert catalog == "- send_invoice: Send an invoice by email to a customer."


def test_the_search_model_counts_against_the_run_limits():
    # One model call left for the search: it is made, and the agent's next call is refused.
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}), "ok"])
    agent = Agent("a", llm, tool_registry=registry(chooser), run_policy=RunPolicy(max_llm_calls=2))
    with pytest.raises(RunLimitExceeded, match="exceeded LLM call limit 2") as info:
        agent.run("go")
    assert chooser.calls == 1 and info.value.result.usage.llm_calls == 2
    # None left: the search does not call its model and answers by keywords.
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}), "ok"])
    agent = Agent("a", llm, tool_registry=registry(chooser), run_policy=RunPolicy(max_llm_calls=1))
    with pytest.raises(RunLimitExceeded) as info:
        agent.run("go")
    assert chooser.calls == 0
    assert info.value.result.tool_calls[0].data["discovered"][0] == "send_invoice"


def test_bad_settings_are_refused():
    reg = ToolRegistry()
    with pytest.raises(ValueError, match="strategy must be one of"):
        ToolSearchTool(ToolRetriever(reg), strategy="guess")
    with pytest.raises(TypeError, match='strategy="model" needs llm='):
        ToolSearchTool(ToolRetriever(reg), strategy="model")
    with pytest.raises(ValueError, match='llm= is used only with strategy="model"'):
        ToolSearchTool(ToolRetriever(reg), llm=ScriptedLLM([]))
