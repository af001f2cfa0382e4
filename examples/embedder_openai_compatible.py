"""Hybrid Tool-RAG with embeddings from an OpenAI-compatible endpoint (POST {base}/embeddings).

OpenAI, Azure-style gateways, vLLM, llama.cpp's server, Ollama and LM Studio all answer this
request. Set:

    AGENTMAKER_EMBEDDINGS_URL    the API base, e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1
    AGENTMAKER_EMBEDDINGS_MODEL  the model name (default text-embedding-3-small)
    OPENAI_API_KEY               sent as a bearer token when set

Without AGENTMAKER_EMBEDDINGS_URL it says so and exits with status 0. Vectors go through
agentmaker.rag.CachedEmbedder (file AGENTMAKER_EMBEDDING_CACHE, default in the temp
directory), so an unchanged catalog costs no API call on the next run. Copy
OpenAICompatibleEmbedder into your project as it is: it needs only the standard library.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from agentmaker import HybridRetriever, ToolRegistry, ToolRetriever, tool
from agentmaker.rag import CachedEmbedder


class EmbeddingAPIError(RuntimeError):
    """The endpoint refused the request or answered something that is not embeddings."""


class OpenAICompatibleEmbedder:
    """``embedder(texts)`` through ``POST {base_url}/embeddings``, ``batch_size`` texts a request."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        batch_size: int = 128,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must be an http(s) URL such as https://api.openai.com/v1, got {base_url!r}"
            )
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.batch_size = batch_size

    def __call__(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(self._request(texts[start : start + self.batch_size]))
        return out

    def _request(self, texts: list[str]) -> list[list[float]]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = json.dumps({"model": self.model, "input": texts}).encode()
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply: Any = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read(500).decode("utf-8", "replace")
            raise EmbeddingAPIError(f"{self.url} answered HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError) as exc:
            raise EmbeddingAPIError(f"cannot reach {self.url}: {exc}") from None
        except ValueError as exc:
            raise EmbeddingAPIError(f"{self.url} did not answer JSON: {exc}") from None
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            got = len(data) if isinstance(data, list) else "no"
            raise EmbeddingAPIError(f"{self.url} returned {got} embeddings for {len(texts)} texts")
        # The API gives each item its input's index; do not rely on the list order.
        vectors: list[list[float] | None] = [None] * len(texts)
        for position, item in enumerate(data):
            index = item.get("index", position) if isinstance(item, dict) else None
            embedding = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < len(texts) or not isinstance(embedding, list):
                raise EmbeddingAPIError(f"{self.url} returned a malformed embedding item: {str(item)[:200]}")
            vectors[index] = [float(x) for x in embedding]
        if any(v is None for v in vectors):
            raise EmbeddingAPIError(f"{self.url} returned the same index twice")
        return [v for v in vectors if v is not None]


@tool
def refund_order(order_id: str) -> str:
    """Give a customer their money back for an order."""
    return "refunded"


@tool
def track_parcel(tracking_number: str) -> str:
    """Where a shipped package is right now."""
    return "in transit"


@tool
def reset_password(email: str) -> str:
    """Send a link to set a new password for an account."""
    return "sent"


@tool
def open_ticket(summary: str) -> str:
    """Open a support ticket for a human agent."""
    return "opened"


def main() -> int:
    base_url = os.environ.get("AGENTMAKER_EMBEDDINGS_URL")
    if not base_url:
        print("AGENTMAKER_EMBEDDINGS_URL is not set (e.g. https://api.openai.com/v1). Nothing to do.")
        return 0
    model = os.environ.get("AGENTMAKER_EMBEDDINGS_MODEL") or "text-embedding-3-small"
    remote = OpenAICompatibleEmbedder(base_url, model, api_key=os.environ.get("OPENAI_API_KEY"))
    cache_file = (
        os.environ.get("AGENTMAKER_EMBEDDING_CACHE") or Path(tempfile.gettempdir()) / "agentmaker-api.emb"
    )
    # The model's identity includes the server: two servers may give one name to different models.
    embedder = CachedEmbedder(remote, cache_file, model_id=f"{model} at {remote.url}")
    registry = ToolRegistry()
    registry.register_all([refund_order, track_parcel, reset_password, open_ticket])
    tool_retriever = ToolRetriever(registry, HybridRetriever(embedder, alpha=0.5), top_k=1)
    tool_retriever.index()
    for query in ("where is my package", "I forgot my password"):
        print(f"{query!r} -> {tool_retriever.retrieve(query)}")
    print(f"embedded {embedder.misses} texts through the API, {embedder.hits} came from the cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
