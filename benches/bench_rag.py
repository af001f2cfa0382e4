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
import re
import statistics
import sys
import time
from pathlib import Path

from agentmaker import HybridRetriever, ToolParameter, ToolRegistry, ToolRetriever
from agentmaker._tool_rag import tool_text

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
    best = math.inf
    for _ in range(3):
        r = HybridRetriever()
        start = time.perf_counter()
        r.add(ids, texts, scope="tools")
        best = min(best, time.perf_counter() - start)
    line(
        "keyword",
        best * 1000,
        evaluate(lambda q: [h.id for h in r.search(q, top_k=10, scope="tools")], queries),
    )

    # Through a registry and ToolRetriever (registration is not timed; index() is).
    registry = ToolRegistry()
    alias: dict[str, str] = {}
    for t in tools:
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", t["name"])[:64]
        if name in alias:
            continue
        alias[name] = t["name"]
        props = (t.get("parameters") or {}).get("properties") or {}
        params = [
            ToolParameter(
                str(p),
                "string",
                str(v.get("description") or "") if isinstance(v, dict) else "",
                required=False,
            )
            for p, v in props.items()
        ]
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

    # Hybrid fusion with the toy embedder.
    h = HybridRetriever(trigram_embedder, alpha=0.3)
    start = time.perf_counter()
    h.add(ids, texts, scope="tools")
    index_ms = (time.perf_counter() - start) * 1000
    line(
        "hybrid", index_ms, evaluate(lambda q: [x.id for x in h.search(q, top_k=10, scope="tools")], queries)
    )


if __name__ == "__main__":
    sys.exit(main())
