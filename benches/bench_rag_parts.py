"""Tool-RAG on a multi-part request over 10k tools, with the embeddings already computed.

The default fusion (``fusion="confidence"``) embeds the whole request and each of its parts and
ranks the catalog once per vector. This bench times that per request, with an embedder that
only looks vectors up (as a warm ``CachedEmbedder`` does), so what is left is the retrieval:

- ``one scan``: ``DenseIndex.search`` of one vector (the floor);
- ``scan per vector``: ``DenseIndex.search`` once per vector of the request, as the fusion did
  before ``DenseIndex.search_many``;
- ``one pass``: ``DenseIndex.search_many`` of all the request's vectors (skipped on a build
  without it);
- ``hybrid alpha 1`` / ``hybrid alpha .5``: the whole ``HybridRetriever.search`` (split, dense
  side, keyword side at alpha .5, fusion and merge), top 10 of 50 candidates per side.

Catalog: the BFCL v4 tools seven times over (10,059 tools, names and texts suffixed per copy, as
in ``bench_rag.py``). Vectors: 384 hashed character-trigram counts per text (a deterministic
stand-in for a model; each copy's row gets a little noise so no two rows are equal). Requests:
three BFCL queries joined as "A. Then B. Also C.", which the fusion splits into three parts, so
four vectors per request. Each figure is over the same requests, the ways interleaved per
request. No network, no downloads.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from agentmaker import HybridRetriever
from agentmaker._native import DenseIndex
from agentmaker.rag.fusion import split_request
from agentmaker.rag.tool_search import tool_text
from bench_rag import COPIES, DATA, load

DIM = 384
REQUESTS = 300
CANDIDATES = 50


def trigram_vector(text: str) -> list[float]:
    v = [0.0] * DIM
    t = f"  {text.lower()}  "
    for i in range(len(t) - 2):
        v[int.from_bytes(hashlib.blake2b(t[i : i + 3].encode(), digest_size=2).digest()) % DIM] += 1.0
    return v


def main() -> None:
    if not DATA.is_dir():
        print(f"rag_parts  skipped: no data at {DATA}")
        return
    tools, queries = load()
    rng = random.Random(37)
    base = {t["name"]: tool_text(t["name"], t.get("description", ""), t.get("parameters")) for t in tools}
    vectors: dict[str, list[float]] = {}
    ids, texts = [], []
    for name, text in base.items():
        v = trigram_vector(text)
        for c in range(COPIES):
            ids.append(f"{name}.copy{c}")
            texts.append(f"{text} edition{c}")
            vectors[texts[-1]] = [x + rng.gauss(0, 0.01) for x in v]
    english = [q["query"].strip().rstrip(".?!") for q in queries if q["lang"] == "en"]
    requests = []
    while len(requests) < REQUESTS:
        a, b, c = rng.sample(english, 3)
        request = f"{a}. Then {b}. Also {c}."
        parts = split_request(request)
        if len(parts) != 3:
            continue
        requests.append(request)
        for text in (request, *parts):
            vectors.setdefault(text, trigram_vector(text))

    def cached(batch: list[str]) -> list[list[float]]:
        return [vectors[t] for t in batch]

    dense = DenseIndex()
    dense.add(ids, [vectors[t] for t in texts])
    retrievers = {}
    for alpha in (1.0, 0.5):
        r = HybridRetriever(cached, alpha=alpha, candidates=CANDIDATES)
        r.add(ids, texts, scope="tools")
        retrievers[alpha] = r
    many = getattr(dense, "search_many", None)
    ways: dict[str, Callable[[list[list[float]]], object]] = {
        "one scan": lambda vs: dense.search(vs[0], CANDIDATES),
        "scan per vector": lambda vs: [dense.search(v, CANDIDATES) for v in vs],
    }
    if many is not None:
        ways["one pass"] = lambda vs: many(vs, CANDIDATES)
        got = many(cached([requests[0], *split_request(requests[0])]), CANDIDATES)
        want = ways["scan per vector"](cached([requests[0], *split_request(requests[0])]))
        assert got == want, "search_many differs from one search per vector"
    times: dict[str, list[float]] = {w: [] for w in ways}
    times["hybrid alpha 1"], times["hybrid alpha .5"] = [], []
    for request in requests:
        vs = cached([request, *split_request(request)])
        for way, run in ways.items():
            start = time.perf_counter_ns()
            run(vs)
            times[way].append((time.perf_counter_ns() - start) / 1000)
        for label, alpha in (("hybrid alpha 1", 1.0), ("hybrid alpha .5", 0.5)):
            start = time.perf_counter_ns()
            retrievers[alpha].search(request, top_k=10, scope="tools")
            times[label].append((time.perf_counter_ns() - start) / 1000)
    print(
        f"rag_parts  {len(ids)} tools x {DIM} dims, {len(requests)} requests of 4 vectors "
        f"(whole + 3 parts), top {CANDIDATES} per vector",
        flush=True,
    )
    for way, t in times.items():
        report(way, t)


def report(way: str, t: Sequence[float]) -> None:
    s = sorted(t)
    n = len(s)
    print(
        f"rag_parts  {way:<16} per request: mean {statistics.fmean(s):6.0f} us  p50 {s[n // 2]:6.0f} us  "
        f"p95 {s[int(n * 0.95)]:6.0f} us",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
