"""Retrieval: ``hybrid`` (``HybridRetriever``: BM25 and embeddings, fused by ``fusion``),
``embedding_cache`` (``CachedEmbedder``), ``tool_search`` (``ToolRetriever``,
``ToolSearchTool``) and ``budget`` (token estimates and the budget a selection must fit)."""

from agentmaker.rag.budget import estimate_tokens
from agentmaker.rag.embedding_cache import CachedEmbedder
from agentmaker.rag.hybrid import Embedder, HybridRetriever, RetrievalHit
from agentmaker.rag.tool_search import ToolRetriever, ToolSearchTool, relative_cutoff, score_threshold

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "HybridRetriever",
    "RetrievalHit",
    "ToolRetriever",
    "ToolSearchTool",
    "estimate_tokens",
    "relative_cutoff",
    "score_threshold",
]
