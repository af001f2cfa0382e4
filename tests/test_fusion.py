"""HybridRetriever's default fusion: normalised scores, confidence weights, multi-part requests.
Test embedders only (no model): bag-of-concepts vectors whose behaviour is known exactly."""

from __future__ import annotations

import pytest
from agentmaker import HybridRetriever
from agentmaker._native import DenseIndex
from agentmaker.rag.fusion import confidence, merge_in_turns, score_fusion, split_request

CONCEPTS = {
    "weather": ("weather", "rain", "sunny", "forecast", "umbrella"),
    "money": ("money", "currency", "cash", "euro", "dollar", "convert"),
    "mail": ("mail", "email", "message", "send", "inbox"),
    "music": ("music", "song", "play", "playlist"),
}


def concept_embedder(texts: list[str]) -> list[list[float]]:
    return [[float(sum(w in t.lower() for w in words)) for words in CONCEPTS.values()] for t in texts]


DOCS = {
    "weather_now": "get_weather: current weather and rain forecast for a city",
    "weather_week": "weekly_forecast: seven day weather forecast",
    "fx": "convert_currency: convert an amount of money between currencies",
    "mail": "send_email: send an email message to a recipient",
    "music": "play_song: play a song or a playlist",
}


def retriever(**kw) -> HybridRetriever:
    r = HybridRetriever(concept_embedder, **kw)
    r.add(list(DOCS), list(DOCS.values()))
    return r


def test_confidence_measures_how_far_the_best_stands_out():
    assert confidence([("a", 5.0)]) == 1.0  # too few to tell
    assert confidence([("a", 2.0), ("b", 2.0), ("c", 2.0)]) == 0.0  # no preference at all
    # 3, 1, 1, 1: mean 1.5, population sd sqrt(0.75).
    assert confidence([("a", 3.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)]) == pytest.approx(1.5 / 0.75**0.5)


def test_score_fusion_normalises_each_side_and_weights_by_confidence():
    lexical = [("a", 12.0), ("b", 6.0), ("c", 0.0)]  # normalised 1, .5, 0; confidence 1.336
    dense = [("c", 0.9), ("b", 0.5), ("a", 0.1)]  # normalised 1, .5, 0; same confidence
    fused = dict(score_fusion(lexical, dense, 0.5))
    assert fused == pytest.approx({"a": 0.5, "b": 0.5, "c": 0.5})
    # Equal scores keep the keyword order.
    assert [d for d, _ in score_fusion(lexical, dense, 0.5)] == ["a", "b", "c"]
    # alpha tilts it; a side with no candidates weighs nothing.
    assert score_fusion(lexical, dense, 0.8)[0][0] == "c"
    assert score_fusion(lexical, [], 0.9) == [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    # A flat side (prefers nothing) gets no say, whatever alpha says.
    flat = [("x", 0.3), ("a", 0.3), ("c", 0.3)]
    assert [d for d, _ in score_fusion(lexical, flat, 0.9)] == ["a", "b", "c", "x"]


def test_split_request_finds_sentences_and_chained_clauses():
    assert split_request("What is the weather in Paris?") == []
    assert split_request("First get the weather in Paris. Then email the forecast to Ann.") == [
        "First get the weather in Paris",
        "email the forecast to Ann",
    ]
    assert split_request("convert 5 euros to dollars and then play my jazz playlist") == [
        "convert 5 euros to dollars",
        "play my jazz playlist",
    ]
    assert split_request("请帮我查询上海明天的天气。然后把结果发邮件给小王。") == [
        "请帮我查询上海明天的天气",
        "然后把结果发邮件给小王",
    ]
    # Fragments too short to be a request do not count as parts.
    assert split_request("Hi. What is the weather in Paris?") == []


def test_merge_in_turns_gives_every_part_a_place_near_the_top():
    whole = [("w1", 1.0), ("w2", 0.9), ("w3", 0.8), ("w4", 0.7)]
    part1 = [("w1", 1.0), ("p1", 0.5)]
    part2 = [("q1", 1.0), ("q2", 0.4)]
    merged = merge_in_turns(whole, [part1, part2])
    assert [d for d, _ in merged] == ["w1", "w2", "q1", "w3", "w4", "p1", "q2"]
    assert dict(merged)["q1"] == 1.0


def test_a_multi_part_request_gets_a_tool_for_each_part():
    # Four weather tools: one embedding of the whole request sits near all of them.
    docs = {f"weather_{i}": f"weather tool {i}: rain and sunny forecast" for i in range(4)}
    docs["music"] = "player: music for the evening"
    r = HybridRetriever(concept_embedder, alpha=1.0)
    r.add(list(docs), list(docs.values()))
    query = "Will it rain tomorrow, is it sunny, what does the forecast say? Also play my favourite song."
    assert [h.id for h in r.search(query, top_k=3)] == ["weather_0", "weather_1", "music"]
    # The same words as one sentence: the weather neighbours take every place.
    one_part = query.replace("? Also", ",")
    assert split_request(one_part) == []
    assert [h.id for h in r.search(one_part, top_k=3)] == ["weather_0", "weather_1", "weather_2"]


class CountingIndex:
    """A real DenseIndex that counts how it is searched."""

    def __init__(self, inner: DenseIndex) -> None:
        self.inner = inner
        self.calls: list[tuple[str, int]] = []

    def __len__(self) -> int:
        return len(self.inner)

    def search(self, vector: list[float], top_k: int) -> list[tuple[str, float]]:
        self.calls.append(("search", 1))
        return self.inner.search(vector, top_k)

    def search_many(self, vectors: list[list[float]], top_k: int) -> list[list[tuple[str, float]]]:
        self.calls.append(("search_many", len(vectors)))
        return self.inner.search_many(vectors, top_k)


def test_a_multi_part_request_is_embedded_and_ranked_in_one_pass():
    batches: list[list[str]] = []

    def embedder(texts: list[str]) -> list[list[float]]:
        batches.append(list(texts))
        return concept_embedder(texts)

    r = HybridRetriever(embedder, alpha=0.5)
    r.add(list(DOCS), list(DOCS.values()))
    counting = CountingIndex(r._scopes[None].dense)
    r._scopes[None].dense = counting
    batches.clear()
    query = "What is the weather forecast for Paris? Then send an email to Bob. Also play a song."
    hits = r.search(query, top_k=5)
    assert batches == [[query, *split_request(query)]] and len(batches[0]) == 4
    assert counting.calls == [("search_many", 4)], "one pass over the index for the four vectors"
    assert {h.id for h in hits[:4]} >= {"weather_now", "mail", "music"}
    # Each hit's embedding score is the one its own search would give (the whole request's first).
    whole = dict(counting.inner.search(concept_embedder([query])[0], 50))
    for h in hits:
        assert h.dense_score is None or h.dense_score == whole[h.id]
    # rrf ranks the whole request only: one vector, one search.
    rrf = HybridRetriever(embedder, alpha=0.5, fusion="rrf")
    rrf.add(list(DOCS), list(DOCS.values()))
    rrf_counting = CountingIndex(rrf._scopes[None].dense)
    rrf._scopes[None].dense = rrf_counting
    assert rrf.search(query, top_k=3)
    assert rrf_counting.calls == [("search", 1)]


def test_an_uninformative_embedder_leaves_the_keyword_ranking_alone():
    keyword = HybridRetriever()
    keyword.add(list(DOCS), list(DOCS.values()))
    flat = HybridRetriever(lambda texts: [[1.0, 1.0]] * len(texts), alpha=0.9)
    flat.add(list(DOCS), list(DOCS.values()))
    for query in ("weather forecast for a city", "send an email", "play a song and convert money"):
        want = [h.id for h in keyword.search(query)]
        assert [h.id for h in flat.search(query)][: len(want)] == want


def test_hits_carry_both_sides_scores_and_bad_fusion_is_refused():
    r = retriever(alpha=0.5)
    hit = r.search("rain forecast")[0]
    assert hit.id == "weather_now" and hit.lexical_score > 0 and hit.dense_score > 0
    assert 0.0 <= hit.score <= 1.0
    # Embedding-only match: no query word in the document.
    fx = r.search("swap my cash for euros")[0]
    assert fx.id == "fx" and fx.lexical_score is None and fx.dense_score == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"fusion must be one of \('confidence', 'rrf'\), got 'max'"):
        HybridRetriever(concept_embedder, fusion="max")
