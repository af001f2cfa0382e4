"""Token budgets for Tool-RAG: estimate_tokens, ToolRetriever.schema_for(max_tokens=...),
Agent(tool_budget=...)."""

from __future__ import annotations

import json

import pytest
from agentmaker import Agent, ToolParameter, ToolRegistry, ToolRetriever
from agentmaker.rag import estimate_tokens
from agentmaker.testing import ScriptedLLM


def test_estimate_charges_pieces_as_the_tokenizers_cut_them():
    # One piece each: a word, a short code, a run of digits, punctuation; the sum is raised 15%
    # (rounded up). tests/test_tool_budget_bound.py checks the estimate against real counts.
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 2  # 1 piece
    assert estimate_tokens(" the cat") == 3  # 2 words, each with its space
    assert estimate_tokens("description") == 3  # 1 + 11 // 6
    assert estimate_tokens("AFN") == 3  # capitals: 1 + 2 // 2
    assert estimate_tokens("createdAtUtc") == 5  # three case segments
    assert estimate_tokens("123456") == 3  # digits in threes
    assert estimate_tokens("天气") == 5  # 6 UTF-8 bytes / 1.5
    # Non-strings count as compact JSON: '{"' 'a' '":' '1' '}'.
    assert estimate_tokens({"a": 1}) == estimate_tokens('{"a":1}') == 6
    assert estimate_tokens({"k": "天"}) == 7


def catalog() -> tuple[ToolRegistry, ToolRetriever]:
    reg = ToolRegistry()
    fn = lambda p: "ok"
    # The best match for "weather" carries a long parameter list, the others are small.
    long_params = [ToolParameter(f"field_{i}", "string", "a weather detail " * 3) for i in range(20)]
    reg.register_function(
        fn, "weather_report", "Full weather report for a city, weather weather", long_params
    )
    reg.register_function(fn, "weather_now", "Current weather for a city", [ToolParameter("city", "string")])
    reg.register_function(
        fn, "weather_alerts", "Weather alerts for a region", [ToolParameter("region", "string")]
    )
    reg.register_function(fn, "tool_search", "Search for more tools", [ToolParameter("query", "string")])
    reg.register_function(fn, "send_email", "Send an email", [ToolParameter("to", "string")])
    tr = ToolRetriever(reg, top_k=2, always_include=["tool_search"])
    return reg, tr


def cost(reg: ToolRegistry, name: str, provider: str = "openai") -> int:
    return estimate_tokens(getattr(reg, f"to_{provider}_schema")(names=[name])[0])


def names(schemas: list[dict]) -> list[str]:
    return [s["function"]["name"] if "function" in s else s["name"] for s in schemas]


def test_without_a_budget_nothing_changes():
    _, tr = catalog()
    assert names(tr.schema_for("weather")) == ["tool_search", "weather_report", "weather_now"]


def test_a_tool_that_does_not_fit_is_skipped_for_the_next_ones():
    reg, tr = catalog()
    small = cost(reg, "tool_search") + cost(reg, "weather_now") + cost(reg, "weather_alerts")
    assert cost(reg, "weather_report") > small
    picked = tr.schema_for("weather", max_tokens=small)
    assert names(picked) == ["tool_search", "weather_now", "weather_alerts"]
    assert sum(estimate_tokens(s) for s in picked) <= small
    # One token less and the last small tool no longer fits.
    assert names(tr.schema_for("weather", max_tokens=small - 1)) == ["tool_search", "weather_now"]
    # Enough for everything: top_k still caps the retrieved tools.
    assert names(tr.schema_for("weather", max_tokens=100_000)) == [
        "tool_search",
        "weather_report",
        "weather_now",
    ]
    assert names(tr.schema_for("weather", max_tokens=100_000, top_k=3)) == [
        "tool_search",
        "weather_report",
        "weather_now",
        "weather_alerts",
    ]


def test_always_included_tools_come_first_and_the_budget_is_hard():
    reg, tr = catalog()
    first = cost(reg, "tool_search")
    assert names(tr.schema_for("weather", max_tokens=first)) == ["tool_search"]
    # An always-included tool bigger than the budget is left out too: the budget is a hard cap.
    big_first = ToolRetriever(reg, top_k=2, always_include=["weather_report", "tool_search"])
    budget = cost(reg, "weather_report") - 1
    picked = names(big_first.schema_for("weather", max_tokens=budget))
    assert picked == ["tool_search", "weather_now", "weather_alerts"]


def test_each_provider_is_measured_in_its_own_rendering():
    reg, tr = catalog()
    budget = cost(reg, "tool_search", "anthropic") + cost(reg, "weather_now", "anthropic")
    picked = tr.schema_for("weather", max_tokens=budget, provider="anthropic")
    assert picked == reg.to_anthropic_schema(names=["tool_search", "weather_now"])
    assert tr.schema_for("weather", provider="gemini") == reg.to_gemini_schema(
        names=["tool_search", "weather_report", "weather_now"]
    )
    # Same inputs, same answer (the estimate has no randomness and no machine dependence).
    assert json.dumps(tr.schema_for("weather", max_tokens=budget, provider="anthropic")) == json.dumps(picked)


def test_bad_budgets_and_providers_are_refused():
    _, tr = catalog()
    with pytest.raises(ValueError, match="max_tokens must be >= 1, got 0"):
        tr.schema_for("weather", max_tokens=0)
    with pytest.raises(TypeError, match="max_tokens must be an integer >= 1, got 1.5"):
        tr.schema_for("weather", max_tokens=1.5)
    with pytest.raises(
        ValueError, match=r"provider must be one of \('openai', 'anthropic', 'gemini'\), got 'bedrock'"
    ):
        tr.schema_for("weather", provider="bedrock")


def test_agent_offers_only_what_fits_its_tool_budget():
    reg, tr = catalog()
    budget = cost(reg, "tool_search") + cost(reg, "weather_now")
    llm = ScriptedLLM(["It is sunny."])
    agent = Agent("a", llm, tool_registry=reg, tool_retriever=tr, tool_budget=budget)
    assert agent.run("What is the weather in Oslo?").final_output == "It is sunny."
    assert [r.tool_names for r in llm.requests] == [["tool_search", "weather_now"]]


def test_agent_tool_budget_is_checked():
    reg, tr = catalog()
    with pytest.raises(ValueError, match="tool_budget needs a tool_retriever"):
        Agent("a", ScriptedLLM([]), tool_registry=reg, tool_budget=100)
    with pytest.raises(ValueError, match="tool_budget must be >= 1, got -5"):
        Agent("a", ScriptedLLM([]), tool_registry=reg, tool_retriever=tr, tool_budget=-5)
