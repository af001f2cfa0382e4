"""Retrieval for Tool-RAG: find the few tools (or any documents) that matter for a request.

:class:`HybridRetriever` ranks documents by BM25 keyword relevance (the Rust ``Bm25Index``:
identifiers split on ``_``/``.``/camelCase/digits, Unicode lowercase, Chinese/Japanese/Korean
matched on character unigrams and bigrams). Give it an ``embedder`` and it also ranks by cosine
similarity of embeddings, and fuses the two rankings (confidence-weighted normalised scores by
default, see :mod:`agentmaker.rag.fusion`).

The tool side lives in :mod:`agentmaker.rag.tool_search` (:class:`ToolRetriever`,
:class:`ToolSearchTool`) and is re-exported here.

The embedder duck type
----------------------
Any callable ``embedder(texts: list[str]) -> list[list[float]]`` returning one vector per text,
all of the same length (plain lists, tuples or NumPy rows all work). It is called with batches
of at most ``batch_size`` documents when adding and with ``[query]`` when searching. It may be
slow (a local model, a remote API): :attr:`HybridRetriever.blocking` tells the Agent to search
off the event loop in that case. Nothing here downloads a model. Wrap it in
:class:`CachedEmbedder` to keep its vectors on disk across processes.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentmaker._native import Bm25Index, DenseIndex
from agentmaker.rag.budget import check_top_k
from agentmaker.rag.fusion import FUSIONS, merge_in_turns, score_fusion, split_request

__all__ = ["Embedder", "HybridRetriever", "RetrievalHit"]

Embedder = Callable[[list[str]], Sequence[Sequence[float]]]


@dataclass(frozen=True, slots=True)
class RetrievalHit:
    """One search result. ``score`` is the BM25 score when no embedder is set, else the fused
    score (0..1 for ``fusion="confidence"``; for a multi-part request, the score in the part's
    ranking that placed the hit, so scores need not decrease down the list; the reciprocal-rank
    score for ``fusion="rrf"``); ``lexical_score``/``dense_score`` are the parts (None if that side did
    not find the document)."""

    id: str
    score: float
    content: str
    metadata: Mapping[str, Any] | None = None
    scope: str | None = None
    lexical_score: float | None = None
    dense_score: float | None = None


def _string_list(values: Any, what: str) -> list[str]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{what} must be a list of strings, got {values!r}")
    out = list(values)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{what} must contain only strings, got {v!r}")
    return out


def _check_scope(scope: Any) -> str | None:
    if scope is not None and not isinstance(scope, str):
        raise TypeError(f"scope must be a string or None, got {scope!r}")
    return scope


class _Scope:
    __slots__ = ("dense", "docs", "lexical")

    def __init__(self, k1: float, b: float, dense: bool) -> None:
        self.lexical = Bm25Index(k1, b)
        self.dense = DenseIndex() if dense else None
        self.docs: dict[str, tuple[str, Mapping[str, Any] | None]] = {}


class HybridRetriever:
    """BM25 keyword search, optionally fused with embedding similarity.

    - ``embedder``: see the module docs; None (the default) means keyword search only.
    - ``alpha`` (0..1, default 0.5): weight of the embedding side in the fusion; the keyword side
      gets ``1 - alpha``. 0 never calls the embedder at search time; 1 ranks by embeddings only.
    - ``fusion``: ``"confidence"`` (default) adds each side's scores normalised to 0..1 over its
      candidates, weighted by ``alpha`` and by how clearly that side prefers its best hit, and
      searches a multi-part request part by part too (see :mod:`agentmaker.rag.fusion`: on BFCL it
      is never below keyword-only on any category). ``"rrf"`` is reciprocal-rank fusion:
      ``(1 - alpha) / (rrf_k + lexical_rank) + alpha / (rrf_k + dense_rank)`` (ranks from 1; a
      side that did not return the document adds nothing).
    - ``k1``, ``b``: BM25 parameters (see ``Bm25Index``: term saturation, length normalisation).
    - ``rrf_k`` (default 60): damping of ``fusion="rrf"``; larger values flatten rank differences.
    - ``candidates`` (default 50): how many hits each side contributes before fusing.
    - ``min_similarity`` (default 0.0): embedding hits at or below this cosine are ignored, so
      an unrelated query can still come back empty.
    - ``batch_size`` (default 256): documents per embedder call.

    Documents live in named ``scope``\\ s (None is the default scope); each scope is a separate
    index, so tools and other documents can share one retriever.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        alpha: float = 0.5,
        k1: float = 1.2,
        b: float = 0.75,
        rrf_k: float = 60.0,
        candidates: int = 50,
        min_similarity: float = 0.0,
        batch_size: int = 256,
        fusion: str = "confidence",
    ) -> None:
        if embedder is not None and not callable(embedder):
            raise TypeError(
                f"embedder must be a callable list[str] -> list[list[float]] or None, got {embedder!r}"
            )
        for name, value, lo, hi in (
            ("alpha", alpha, 0.0, 1.0),
            ("min_similarity", min_similarity, -1.0, 1.0),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise ValueError(f"{name} must be a number between {lo:g} and {hi:g}, got {value!r}")
        if (
            isinstance(rrf_k, bool)
            or not isinstance(rrf_k, (int, float))
            or not (rrf_k > 0 and math.isfinite(rrf_k))
        ):
            raise ValueError(f"rrf_k must be a positive number, got {rrf_k!r}")
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {FUSIONS}, got {fusion!r}")
        self.fusion = fusion
        self.candidates = check_top_k(candidates, "candidates")
        self.batch_size = check_top_k(batch_size, "batch_size")
        Bm25Index(k1, b)  # validates k1 and b now rather than on the first add
        self.embedder = embedder
        self.alpha = float(alpha)
        self.k1 = float(k1)
        self.b = float(b)
        self.rrf_k = float(rrf_k)
        self.min_similarity = float(min_similarity)
        self._scopes: dict[str | None, _Scope] = {}
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        mode = "keyword" if self.embedder is None else f"hybrid alpha={self.alpha:g}"
        return f"HybridRetriever({mode}, {sum(len(s.docs) for s in self._scopes.values())} documents)"

    @property
    def blocking(self) -> bool:
        """True when a search may wait on the embedder (the Agent then searches on a thread)."""
        return self.embedder is not None

    # ------------------------------------------------------------------------------- writing

    def _embed(self, texts: list[str]) -> list[list[float]]:
        assert self.embedder is not None
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            vectors = self.embedder(chunk)
            try:
                rows = [[float(x) for x in v] for v in vectors]
            except (TypeError, ValueError) as exc:
                raise TypeError(
                    f"the embedder must return one sequence of numbers per text, got {type(vectors).__name__}: {exc}"
                ) from None
            if len(rows) != len(chunk):
                raise ValueError(f"the embedder returned {len(rows)} vectors for {len(chunk)} texts")
            out.extend(rows)
        return out

    def add(
        self,
        ids: Iterable[str],
        contents: Iterable[str],
        *,
        scope: str | None = None,
        metadatas: Iterable[Mapping[str, Any] | None] | None = None,
    ) -> None:
        """Adds documents to ``scope``, replacing those whose id is already there. Embeddings
        are computed (and checked) before anything changes, so a failing embedder leaves the
        index as it was."""
        ids = _string_list(ids, "ids")
        contents = _string_list(contents, "contents")
        scope = _check_scope(scope)
        if len(ids) != len(contents):
            raise ValueError(f"got {len(ids)} ids but {len(contents)} contents; pass one per id")
        metas: list[Mapping[str, Any] | None]
        if metadatas is None:
            metas = [None] * len(ids)
        else:
            metas = list(metadatas)
            if len(metas) != len(ids):
                raise ValueError(f"got {len(ids)} ids but {len(metas)} metadatas; pass one per id")
            for m in metas:
                if m is not None and not isinstance(m, Mapping):
                    raise TypeError(f"each metadata must be a mapping or None, got {m!r}")
        if not ids:
            return
        vectors = self._embed(contents) if self.embedder is not None else None
        with self._lock:
            sc = self._scopes.get(scope)
            fresh = sc is None
            if sc is None:
                sc = _Scope(self.k1, self.b, self.embedder is not None)
            if vectors is not None and sc.dense is not None:
                sc.dense.add(ids, vectors)  # raises on bad vectors before the keyword side changes
            sc.lexical.add(ids, contents)
            for i, c, m in zip(ids, contents, metas):
                sc.docs[i] = (c, dict(m) if m is not None else None)
            if fresh:
                self._scopes[scope] = sc

    def delete(self, ids: Iterable[str], *, scope: str | None = None) -> int:
        """Removes documents from ``scope``; returns how many were there."""
        ids = _string_list(ids, "ids")
        scope = _check_scope(scope)
        with self._lock:
            sc = self._scopes.get(scope)
            if sc is None:
                return 0
            removed = sc.lexical.delete(ids)
            if sc.dense is not None:
                sc.dense.delete(ids)
            for i in ids:
                sc.docs.pop(i, None)
            return removed

    def clear(self, *, scope: str | None = None) -> None:
        with self._lock:
            self._scopes.pop(_check_scope(scope), None)

    def ids(self, *, scope: str | None = None) -> list[str]:
        sc = self._scopes.get(_check_scope(scope))
        return sc.lexical.ids() if sc is not None else []

    def count(self, *, scope: str | None = None) -> int:
        sc = self._scopes.get(_check_scope(scope))
        return len(sc.docs) if sc is not None else 0

    # ------------------------------------------------------------------------------- reading

    def search(self, query: str, *, top_k: int = 8, scope: str | None = None) -> list[RetrievalHit]:
        """The best ``top_k`` documents of ``scope`` for ``query``, best first (maybe fewer,
        maybe none: only documents that match are returned)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {query!r}")
        top_k = check_top_k(top_k)
        scope = _check_scope(scope)
        sc = self._scopes.get(scope)
        if sc is None or not query.strip():
            return []
        top_k = min(top_k, len(sc.docs) or 1)  # an absurd top_k must not overflow the native call
        docs = sc.docs
        if sc.dense is None or self.embedder is None:
            hits = []
            for doc_id, score in sc.lexical.search(query, top_k):
                doc = docs.get(doc_id)
                if doc is not None:
                    hits.append(RetrievalHit(doc_id, score, doc[0], doc[1], scope, score, None))
            return hits
        n = max(top_k, self.candidates)
        if self.fusion == "rrf":
            fused = self._rrf(sc, query, n)
        else:
            fused = self._confidence_fusion(sc, query, n)
        hits = []
        for doc_id, score, lex, den in fused:
            doc = docs.get(doc_id)
            if doc is not None:
                hits.append(RetrievalHit(doc_id, score, doc[0], doc[1], scope, lex, den))
                if len(hits) == top_k:
                    break
        return hits

    def _lexical(self, sc: _Scope, text: str, n: int) -> list[tuple[str, float]]:
        return sc.lexical.search(text, n) if self.alpha < 1.0 else []

    def _similar(self, hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
        return [(i, s) for i, s in hits if s > self.min_similarity]

    def _confidence_fusion(self, sc: _Scope, query: str, n: int) -> list[tuple[str, float, Any, Any]]:
        parts = split_request(query) if self.alpha > 0.0 else []
        texts = [query, *parts]
        # The whole request's vector and each part's, ranked in one pass over the dense index.
        denses: list[list[tuple[str, float]]] = [[] for _ in texts]
        if self.alpha > 0.0 and sc.dense is not None and len(sc.dense) > 0:
            denses = [self._similar(hits) for hits in sc.dense.search_many(self._embed(texts), n)]
        lex_scores: dict[str, float] = {}
        dense_scores: dict[str, float] = {}
        rankings = []
        for text, dense in zip(texts, denses):
            lexical = self._lexical(sc, text, n)
            for store, ranking in ((lex_scores, lexical), (dense_scores, dense)):
                for doc_id, raw in ranking:
                    store.setdefault(doc_id, raw)
            rankings.append(score_fusion(lexical, dense, self.alpha))
        merged = merge_in_turns(rankings[0], rankings[1:]) if parts else rankings[0]
        return [(d, s, lex_scores.get(d), dense_scores.get(d)) for d, s in merged]

    def _rrf(self, sc: _Scope, query: str, n: int) -> list[tuple[str, float, Any, Any]]:
        lexical = self._lexical(sc, query, n)
        dense: list[tuple[str, float]] = []
        if self.alpha > 0.0 and sc.dense is not None and len(sc.dense) > 0:
            dense = self._similar(sc.dense.search(self._embed([query])[0], n))
        fused: dict[str, list[Any]] = {}  # id -> [score, best rank, lexical score, dense score]
        for weight, ranking, slot in ((1.0 - self.alpha, lexical, 2), (self.alpha, dense, 3)):
            for rank, (doc_id, raw) in enumerate(ranking, 1):
                entry = fused.get(doc_id)
                if entry is None:
                    entry = fused[doc_id] = [0.0, rank, None, None]
                entry[0] += weight / (self.rrf_k + rank)
                entry[1] = min(entry[1], rank)
                entry[slot] = raw
        # Equal fused scores: the better single rank wins, then the lexical order, then the id.
        order = sorted(fused.items(), key=lambda kv: (-kv[1][0], kv[1][1], kv[1][2] is None, kv[0]))
        return [(d, e[0], e[2], e[3]) for d, e in order]
