"""Tool-RAG: HybridRetriever, ToolRetriever, ToolSearchTool, and the Agent using them."""

from __future__ import annotations

import asyncio

import pytest
from agentmaker import (
    Agent,
    HybridRetriever,
    ToolConfigError,
    ToolParameter,
    ToolPermissions,
    ToolRegistry,
    ToolRetriever,
    ToolSearchTool,
    tool,
)
from agentmaker._native import Bm25Index, DenseIndex
from agentmaker.rag.tool_search import IndexChanges
from agentmaker.testing import ScriptedLLM

DOCS = {
    "weather": "get_current_weather: Get the current weather for a city. city unit",
    "fx": "convert_currency: Convert an amount of money between currencies. amount source target",
    "mail": "send_email: Send an email message to a recipient. to subject body",
    "stocks": "get_stock_price: Look up the latest stock price for a ticker symbol. ticker",
    "zh_weather": "cha_tianqi: 查询城市的天气预报和气温",
}


def keyword_retriever() -> HybridRetriever:
    r = HybridRetriever()
    r.add(list(DOCS), list(DOCS.values()), metadatas=[{"n": i} for i in range(len(DOCS))])
    return r


# ------------------------------------------------------------------------------ HybridRetriever


def test_keyword_ranking_on_a_small_set():
    r = keyword_retriever()
    hits = r.search("convert 100 dollars between currencies")
    assert [h.id for h in hits] == ["fx"]
    assert hits[0].content == DOCS["fx"] and hits[0].metadata == {"n": 1} and hits[0].scope is None
    assert hits[0].score == hits[0].lexical_score > 0 and hits[0].dense_score is None
    assert r.search("what is the weather like in Paris?")[0].id == "weather"
    assert r.search("email my boss the report")[0].id == "mail"
    # Identifier parts and plural/singular forms meet.
    assert r.search("stock prices")[0].id == "stocks"
    assert r.search("nothing relevant here zzz") == []
    assert r.search("   ") == []
    many = r.search("get the current stock weather", top_k=2)
    assert len(many) == 2 and many[0].score >= many[1].score


def test_chinese_query_matches_chinese_description():
    r = keyword_retriever()
    assert r.search("我想知道上海的天气")[0].id == "zh_weather"
    assert r.search("气温")[0].id == "zh_weather"


def test_tokenizer_is_exposed_for_inspection():
    assert Bm25Index.tokenize("getCurrentWeather math.hypot") == [
        "get",
        "current",
        "weather",
        "math",
        "hypot",
    ]
    assert Bm25Index.tokenize("天气预报") == ["天", "天气", "气", "气预", "预", "预报", "报"]


def test_add_replaces_delete_counts_and_scopes_are_separate():
    r = keyword_retriever()
    r.add(["fx"], ["fx: translate text between languages"])
    assert r.search("currencies") == []
    assert r.search("translate")[0].id == "fx"
    assert r.delete(["fx", "nope"]) == 1
    assert r.search("translate") == [] and r.count() == 4
    r.add(["a"], ["apples and pears"], scope="fruit")
    assert r.search("apples") == [] and r.search("apples", scope="fruit")[0].id == "a"
    assert r.ids(scope="fruit") == ["a"] and r.ids()[:2] == ["weather", "mail"]
    r.clear(scope="fruit")
    assert r.search("apples", scope="fruit") == [] and r.delete(["a"], scope="missing") == 0


def test_equal_scores_keep_insertion_order():
    r = HybridRetriever()
    r.add(["z", "a", "m"], ["same text"] * 3)
    assert [h.id for h in r.search("text")] == ["z", "a", "m"]


def test_huge_top_k_and_concurrent_use():
    import threading

    r = keyword_retriever()
    assert len(r.search("weather city email stock currencies", top_k=10**30)) == 4
    errors: list[BaseException] = []

    def searcher():
        try:
            for _ in range(200):
                hits = r.search("weather in the city")
                assert hits and hits[0].id == "weather"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer():
        try:
            for i in range(200):
                r.add([f"x{i}"], [f"filler document number {i}"])
                r.delete([f"x{i - 1}"])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=searcher) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert r.ids()[-1] == "x199" and r.count() == len(DOCS) + 1


def test_bad_arguments_raise_clear_errors():
    r = HybridRetriever()
    with pytest.raises(ValueError, match="top_k must be >= 1, got 0"):
        r.search("x", top_k=0)
    with pytest.raises(TypeError, match="top_k must be an integer"):
        r.search("x", top_k=True)
    with pytest.raises(TypeError, match="query must be a string"):
        r.search(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="got 2 ids but 1 contents"):
        r.add(["a", "b"], ["x"])
    with pytest.raises(TypeError, match="ids must be a list of strings"):
        r.add("ab", ["x", "y"])
    with pytest.raises(TypeError, match="scope must be a string or None"):
        r.search("x", scope=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha must be a number between 0 and 1"):
        HybridRetriever(alpha=1.5)
    with pytest.raises(TypeError, match="embedder must be a callable"):
        HybridRetriever(embedder="model")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k1 must be a finite number >= 0"):
        HybridRetriever(k1=-1)
    with pytest.raises(ValueError, match="b must be a number between 0 and 1"):
        Bm25Index(1.2, 2.0)


# Toy embedding: each text maps onto three "concepts" by keyword, so synonyms meet.
CONCEPTS = [
    ("money", "currency", "currencies", "dollars", "euros", "cash"),
    ("weather", "rain", "sunny", "umbrella"),
    ("mail", "email", "letter", "message"),
]


def concept_embedder(calls: list[int] | None = None):
    def embed(texts: list[str]) -> list[list[float]]:
        if calls is not None:
            calls.append(len(texts))
        return [[float(sum(w in t.lower() for w in words)) for words in CONCEPTS] for t in texts]

    return embed


def test_embedder_adds_semantic_matches_by_rank_fusion():
    r = HybridRetriever(concept_embedder(), alpha=0.5, fusion="rrf")
    r.add(list(DOCS), list(DOCS.values()))
    # No query word appears in the fx document, but the embedding links "cash"/"euros" to money.
    hits = r.search("swap my cash into euros")
    assert hits[0].id == "fx"
    assert hits[0].lexical_score is None and hits[0].dense_score == pytest.approx(1.0)
    assert hits[0].score == pytest.approx(0.5 / 61)
    # Both sides agree on weather: that hit gets both contributions.
    top = r.search("will it rain? weather please")[0]
    assert top.id == "weather" and top.lexical_score > 0 and top.dense_score > 0
    assert top.score == pytest.approx(0.5 / 61 + 0.5 / 61)
    # Unrelated in both spaces: nothing (min_similarity filters zero cosines).
    assert r.search("quantum chromodynamics") == []
    # alpha=0 ignores the embedding side entirely.
    lexical_only = HybridRetriever(concept_embedder(), alpha=0.0, fusion="rrf")
    lexical_only.add(list(DOCS), list(DOCS.values()))
    assert lexical_only.search("swap my cash into euros") == []


def test_embedder_errors_leave_the_index_unchanged():
    r = HybridRetriever(lambda texts: [[1.0, 0.0]] * (len(texts) - 1))
    with pytest.raises(ValueError, match="returned 1 vectors for 2 texts"):
        r.add(["a", "b"], ["x", "y"])
    assert r.count() == 0
    r = HybridRetriever(lambda texts: [[1.0, 0.0, 0.0] if t == "beta" else [1.0, 0.0] for t in texts])
    r.add(["a"], ["alpha"])
    with pytest.raises(ValueError, match=r"has 3 dimensions, but this index holds 2-dimensional"):
        r.add(["b"], ["beta"])
    assert r.ids() == ["a"] and [h.id for h in r.search("alpha")] == ["a"]
    r = HybridRetriever(lambda texts: [[float("nan")]] * len(texts))
    with pytest.raises(ValueError, match="NaN or infinity"):
        r.add(["a"], ["alpha"])
    r = HybridRetriever(lambda texts: [["x"]] * len(texts))
    with pytest.raises(TypeError, match="one sequence of numbers per text"):
        r.add(["a"], ["alpha"])


def test_dense_index_directly():
    d = DenseIndex()
    d.add(["x", "y"], [[1.0, 0.0], [0.0, 1.0]])
    assert d.dim == 2 and len(d) == 2 and "x" in d
    assert d.search([2.0, 0.5], 1)[0][0] == "x"
    with pytest.raises(ValueError, match="got 1 ids but 2 vectors"):
        d.add(["z"], [[1.0, 0.0], [0.0, 1.0]])
    assert d.delete(["x", "q"]) == 1 and d.search([1.0, 0.0], 5) == [("y", 0.0)]
    fresh = DenseIndex()
    with pytest.raises(ValueError, match='"b" has 3 dimensions, but this index holds 2-dimensional'):
        fresh.add(["a", "b"], [[1.0, 0.0], [1.0, 0.0, 0.0]])
    assert len(fresh) == 0 and fresh.dim is None, "a bad batch changes nothing"


def test_dense_index_searches_many_vectors_in_one_call():
    d = DenseIndex()
    assert d.search_many([[1.0], [2.0, 3.0]], 3) == [[], []], "an empty index: one empty ranking each"
    d.add(["x", "y", "xy", "x2"], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    queries = [[3.0, 0.1], [0.0, 1.0], [1.0, 1.0]]
    for top_k in (1, 2, 4, 9):
        assert d.search_many(queries, top_k) == [d.search(q, top_k) for q in queries]
    assert d.search_many([[0.0, 1.0], [5.0, 0.0]], 2) == [
        [("y", 1.0), ("xy", pytest.approx(0.5**0.5))],
        [("x", 1.0), ("x2", 1.0)],
    ], "ties keep the order of adding"
    assert d.search_many([], 3) == []
    with pytest.raises(ValueError, match='"<query 1>" has 3 dimensions, but this index holds 2-dimensional'):
        d.search_many([[1.0, 0.0], [1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match='"<query>" contains NaN or infinity'):
        d.search_many([[float("inf"), 0.0]])


# ------------------------------------------------------------------------------- ToolRetriever


def make_registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool
    def get_current_weather(city: str, unit: str = "celsius") -> str:
        """Get the current weather for a city.

        Args:
            city: The city, e.g. Paris.
            unit: celsius or fahrenheit.
        """
        return f"sunny in {city}"

    @tool
    def convert_currency(amount: float, source: str, target: str) -> str:
        """Convert an amount of money between currencies."""
        return f"{amount} {source} = {amount * 2} {target}"

    @tool
    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email message to a recipient."""
        return "sent"

    @tool
    def get_stock_price(ticker: str) -> str:
        """Look up the latest stock price for a ticker symbol."""
        return "42"

    @tool
    def cha_tianqi(city: str) -> str:
        """查询城市的天气预报和气温"""
        return "晴"

    reg.register_all([get_current_weather, convert_currency, send_email, get_stock_price, cha_tianqi])
    return reg


def test_retrieve_ranks_and_renders_the_subset():
    reg = make_registry()
    tr = ToolRetriever(reg, HybridRetriever(), top_k=2)
    assert tr.index() == IndexChanges(added=tuple(reg.names()), updated=(), removed=(), unchanged=0)
    assert tr.retrieve("convert between currencies") == ["convert_currency"]
    assert tr.retrieve("what's the weather in Paris", top_k=1) == ["get_current_weather"]
    assert tr.retrieve("上海今天天气怎么样")[0] == "cha_tianqi"
    schema = tr.schema_for("email the team", top_k=1)
    assert [s["function"]["name"] for s in schema] == ["send_email"]
    assert tr.description_for("stock price of ACME").startswith(
        "- get_stock_price: Look up the latest stock price"
    )


def test_always_include_comes_first_and_takes_no_slot():
    reg = make_registry()
    tr = ToolRetriever(reg, top_k=1, always_include=("send_email", "not_registered", "send_email"))
    assert tr.always_include == ("send_email", "not_registered")
    # The best match is send_email itself: it is not repeated, and the slot goes to the next match.
    assert tr.retrieve("send an email about the weather") == ["send_email", "get_current_weather"]
    assert tr.retrieve("convert currencies") == ["send_email", "convert_currency"]


def test_on_empty_modes():
    reg = make_registry()
    query = "quantum chromodynamics"
    assert ToolRetriever(reg).retrieve(query) == reg.names()
    assert ToolRetriever(reg, always_include=["get_stock_price"]).retrieve(query)[0] == "get_stock_price"
    assert ToolRetriever(reg, always_include=["send_email"], on_empty="always_include").retrieve(query) == [
        "send_email"
    ]
    assert ToolRetriever(reg, always_include=["send_email"], on_empty="none").retrieve(query) == []
    assert ToolRetriever(reg).retrieve(query, on_empty="none") == []


def test_selector_output_is_deduplicated_filtered_and_capped():
    reg = make_registry()
    seen = []

    def selector(query, hits):
        seen.append((query, [h.id for h in hits]))
        # Returns a mix of hits and names, with repeats and an unknown name.
        return [hits[0], hits[0].id, "ghost", "send_email", "get_stock_price", "convert_currency"]

    tr = ToolRetriever(reg, top_k=2, selector=selector, always_include=["cha_tianqi"])
    names = tr.retrieve("weather forecast for a city")
    assert names == ["cha_tianqi", "get_current_weather", "send_email"]
    assert seen[0][0] == "weather forecast for a city" and seen[0][1][0] == "get_current_weather"
    assert len(seen[0][1]) <= 3  # top_k + always_include hits are offered
    threshold = ToolRetriever(reg, top_k=5, selector=lambda q, hits: [h for h in hits if h.score > 1.0])
    assert threshold.retrieve("convert money between currencies") == ["convert_currency"]
    with pytest.raises(TypeError, match="selector must return an iterable"):
        ToolRetriever(reg, selector=lambda q, h: None).retrieve("weather")
    with pytest.raises(TypeError, match=r"tool names or hits with an \.id"):
        ToolRetriever(reg, selector=lambda q, h: [1]).retrieve("weather")


def test_ready_made_selectors():
    from agentmaker.rag import relative_cutoff, score_threshold

    reg = make_registry()
    query = "send an email about the weather"
    tr = ToolRetriever(reg, top_k=5)
    tr.index()
    hits = tr.retriever.search(query, top_k=5, scope="tools")
    assert [h.id for h in hits] == ["send_email", "get_current_weather"] and hits[1].score < hits[0].score
    middle = (hits[0].score + hits[1].score) / 2
    assert ToolRetriever(reg, top_k=5, selector=score_threshold(middle)).retrieve(query) == ["send_email"]
    assert ToolRetriever(reg, top_k=5, selector=score_threshold(0)).retrieve(query) == [h.id for h in hits]
    ratio = hits[1].score / hits[0].score
    loose = relative_cutoff(ratio * 0.99)
    assert ToolRetriever(reg, top_k=5, selector=loose).retrieve(query) == [h.id for h in hits]
    strict = relative_cutoff(min(1.0, ratio * 1.01))
    assert ToolRetriever(reg, top_k=5, selector=strict).retrieve(query) == ["send_email"]
    with pytest.raises(ValueError, match=r"fraction must be a number in \(0, 1\]"):
        relative_cutoff(0)
    with pytest.raises(TypeError, match="min_score must be a number"):
        score_threshold("high")  # type: ignore[arg-type]


def test_index_reconciles_instead_of_re_adding():
    reg = make_registry()
    calls: list[int] = []
    tr = ToolRetriever(reg, HybridRetriever(concept_embedder(calls)))
    assert len(tr.index().added) == 5 and calls == [5]
    again = tr.index()
    assert again == IndexChanges(unchanged=5) and calls == [5], "unchanged tools are not re-embedded"

    @tool(name="send_email")
    def send_letter(to: str) -> str:
        """Post a paper letter."""
        return "posted"

    reg.register(send_letter, overwrite=True)
    reg.unregister("get_stock_price")
    changes = tr.index()
    assert changes == IndexChanges(updated=("send_email",), removed=("get_stock_price",), unchanged=3)
    assert calls == [5, 1]
    assert "get_stock_price" not in tr.retriever.ids(scope="tools")
    assert tr.retrieve("paper letter", top_k=1) == ["send_email"]


def test_index_sees_a_changed_description_of_the_same_tool():
    reg = make_registry()
    tr = ToolRetriever(reg)
    tr.index()
    reg.get("get_stock_price").description = "Find the share value of a listed company."
    assert tr.index() == IndexChanges(updated=("get_stock_price",), unchanged=4)
    assert tr.retrieve("share value", top_k=1) == ["get_stock_price"]


@pytest.mark.parametrize("use_async", [False, True])
def test_agent_retrieves_off_the_event_loop_only_when_an_embedder_may_block(use_async):
    import threading

    threads: list[str] = []

    def embed(texts):
        threads.append(threading.current_thread().name)
        return concept_embedder()(texts)

    reg = make_registry()
    for retriever, blocking in ((HybridRetriever(), False), (HybridRetriever(embed), True)):
        tr = ToolRetriever(reg, retriever, top_k=1)
        assert tr.blocking is blocking
        tr.index()
        threads.clear()
        llm = ScriptedLLM(["fine"])
        agent = Agent("a", llm, tool_registry=reg, tool_retriever=tr)
        asyncio.run(agent.arun("umbrella today?")) if use_async else agent.run("umbrella today?")
        expected = ["get_current_weather"] if blocking else reg.names()  # keyword side: no hit, all tools
        assert llm.requests[0].tool_names == expected
        if blocking:
            # The query embedding ran on a worker thread in arun, on the caller's thread in run.
            assert (threads[-1] != threading.current_thread().name) == use_async


def test_retrieve_indexes_lazily_and_follows_registry_growth():
    reg = make_registry()
    tr = ToolRetriever(reg)  # index() never called
    assert tr.retrieve("convert currencies", top_k=1) == ["convert_currency"]

    @tool
    def translate_text(text: str, language: str) -> str:
        """Translate text into another language."""
        return text

    reg.register(translate_text)
    assert tr.retrieve("translate this into French", top_k=1) == ["translate_text"]


def test_retrieve_allowed_filter_looks_further_down():
    reg = make_registry()
    tr = ToolRetriever(reg, top_k=1, always_include=["send_email"])
    allowed = lambda n: n not in ("get_current_weather", "send_email")
    assert tr.retrieve("weather in the city", allowed=allowed) == ["cha_tianqi"]


def test_tool_retriever_validation():
    reg = make_registry()
    with pytest.raises(ValueError, match="top_k must be >= 1, got 0"):
        ToolRetriever(reg, top_k=0)
    with pytest.raises(
        ValueError, match=r"on_empty must be one of \('all', 'always_include', 'none'\), got 'some'"
    ):
        ToolRetriever(reg, on_empty="some")
    with pytest.raises(TypeError, match="always_include must be a sequence of tool names"):
        ToolRetriever(reg, always_include="tool_search")
    with pytest.raises(TypeError, match="selector must be a callable"):
        ToolRetriever(reg, selector=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="registry must be a ToolRegistry"):
        ToolRetriever(object())
    with pytest.raises(TypeError, match="retriever must be a HybridRetriever"):
        ToolRetriever(reg, object())
    tr = ToolRetriever(reg)
    with pytest.raises(ValueError, match="top_k must be >= 1, got -1"):
        tr.retrieve("x", top_k=-1)
    with pytest.raises(TypeError, match="query must be a string"):
        tr.retrieve(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------- ToolSearchTool


def test_tool_search_tool_results():
    reg = make_registry()
    tr = ToolRetriever(reg, always_include=("tool_search",))
    search = ToolSearchTool(tr, top_k=1)
    reg.register(search)
    assert search.name == "tool_search"
    assert reg.get_schema("tool_search")["required"] == ["query"]
    resp = reg.execute_tool("tool_search", {"query": "convert money between currencies"})
    assert resp.status == "success"
    assert resp.text.startswith("Found these relevant tools (you can call them now):\n- convert_currency:")
    assert resp.data == {"discovered": ["convert_currency"]}
    empty = reg.execute_tool("tool_search", {"query": "  "})
    assert (empty.status, empty.text) == (
        "error",
        "Error: tool_search requires query (what capability to find)",
    )
    none = reg.execute_tool("tool_search", {"query": "quantum chromodynamics"})
    assert (none.status, none.text, none.data) == ("success", "(no relevant tools found)", None)
    # tool_search never lists itself, even when the query names it.
    found = reg.execute_tool("tool_search", {"query": "search for additional available tools"})
    assert "tool_search" not in (found.data or {}).get("discovered", [])


def test_tool_search_prompts():
    tr = ToolRetriever(make_registry())
    custom = ToolSearchTool(
        tr, prompts={"tool_search.no_match": "nothing", "tool_search.description": "Find tools."}
    )
    assert custom.description == "Find tools."
    assert custom.run({"query": "zzz qqq"}).text == "nothing"
    with pytest.raises(
        ToolConfigError,
        match="unknown prompt key 'nope'; known keys: tool_search.bad_action, tool_search.description",
    ):
        ToolSearchTool(tr, prompts={"nope": "x"})
    with pytest.raises(TypeError, match="tool_retriever must be a ToolRetriever"):
        ToolSearchTool(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_k must be >= 1"):
        ToolSearchTool(tr, top_k=0)


# ----------------------------------------------------------------------------- inside an Agent


def agent_setup(**perms):
    reg = make_registry()
    tr = ToolRetriever(reg, top_k=1, always_include=("tool_search",))
    reg.register(ToolSearchTool(tr, top_k=2))
    tr.index()
    permissions = ToolPermissions(**perms) if perms else None
    return reg, tr, permissions


@pytest.mark.parametrize("use_async", [False, True])
def test_agent_offers_the_subset_and_merges_discovered_tools(use_async):
    reg, tr, _ = agent_setup()
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "convert money between currencies"}),
            ScriptedLLM.tool_call(
                "convert_currency", {"amount": 5, "source": "EUR", "target": "USD"}, call_id="c2"
            ),
            "5 EUR is 10 USD.",
        ]
    )
    agent = Agent("assistant", llm, tool_registry=reg, tool_retriever=tr)
    query = "What's the weather in Paris?"
    result = asyncio.run(agent.arun(query)) if use_async else agent.run(query)
    assert result.final_output == "5 EUR is 10 USD."
    assert [r.tool_names for r in llm.requests] == [
        ["tool_search", "get_current_weather"],
        ["tool_search", "get_current_weather", "convert_currency"],
        ["tool_search", "get_current_weather", "convert_currency"],
    ]
    assert result.tool_calls[0].data == {"discovered": ["convert_currency"]}
    assert result.tool_calls[1].output == "5 EUR = 10 USD"


def test_agent_never_shows_denied_tools_in_subset_or_search_results():
    reg, tr, permissions = agent_setup(deny={"convert_currency", "get_current_weather"})
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "convert money between currencies weather"}),
            "ok",
        ]
    )
    agent = Agent("assistant", llm, tool_registry=reg, tool_retriever=tr, permissions=permissions)
    result = agent.run("weather in my city")
    # The denied best match does not take the single retrieval slot: the next allowed one does.
    assert llm.requests[0].tool_names == ["tool_search", "cha_tianqi"]
    search = result.tool_calls[0]
    assert "convert_currency" not in search.output and "get_current_weather" not in search.output
    assert "convert_currency" not in (search.data or {}).get("discovered", [])
    assert all("convert_currency" not in r.tool_names for r in llm.requests)
    tool_messages = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert tool_messages == [search.output]


def test_tool_text_indexes_parameter_descriptions_and_enum_values():
    from agentmaker.rag.tool_search import tool_text

    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "description": "Temperature unit", "enum": ["celsius", "fahrenheit"]},
            "level": {"type": "integer", "enum": [1, 2]},
            "odd": "not a schema",
        },
    }
    assert tool_text("get_weather", "Current weather", schema) == (
        "get_weather: Current weather unit level odd Temperature unit celsius fahrenheit 1 2"
    )
    reg = ToolRegistry()
    reg.register_function(
        lambda p: "",
        "ride",
        "Book a ride",
        [
            ToolParameter(
                "kind", "string", "ride type", schema={"type": "string", "enum": ["Plus", "Comfort"]}
            )
        ],
    )
    reg.register_function(lambda p: "", "other", "Book a table", [])
    assert ToolRetriever(reg).retrieve("I need a Comfort car") == ["ride"]
