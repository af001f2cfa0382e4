"""The embedder recipes in examples/: a local BERT model on NumPy and an OpenAI-compatible API.

CI has neither the all-MiniLM-L6-v2 weights nor a network, so the local recipe runs here on a
tiny BERT model of random weights that this file writes in the same formats (config.json,
tokenizer.json, model.safetensors), checked against a plain one-sentence-at-a-time reference;
the API recipe talks to an embeddings server on 127.0.0.1 written below.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from conftest import REPO
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

EXAMPLES = REPO / "examples"


def load_example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_example(name, env):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )


# ------------------------------------------------------------------ a tiny BERT stand-in

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "a",
    "the",
    "to",
    "of",
    "in",
    "is",
    "it",
    "for",
    "my",
    "how",
    "many",
    "money",
    "currency",
    "convert",
    "weather",
    "city",
    "rain",
    "email",
    "send",
    "message",
    "calendar",
    "meeting",
    "event",
    "flight",
    "flights",
    "plane",
    "book",
    "translate",
    "text",
    "language",
    "amount",
    "target",
    "source",
    "day",
    "title",
    "subject",
    "body",
    "##s",
    "##ing",
]
CONFIG = {
    "hidden_size": 16,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "intermediate_size": 24,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "vocab_size": len(WORDS),
    "layer_norm_eps": 1e-12,
}


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A 2-layer BERT with random weights, saved the way Hugging Face models are."""
    path = tmp_path_factory.mktemp("tiny-bert")
    (path / "config.json").write_text(json.dumps(CONFIG))
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.save(str(path / "tokenizer.json"))
    rng = np.random.default_rng(26)
    h, inner = CONFIG["hidden_size"], CONFIG["intermediate_size"]

    def t(*shape):
        return rng.normal(0, 0.5, shape).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": t(len(WORDS), h),
        "embeddings.position_embeddings.weight": t(512, h),
        "embeddings.token_type_embeddings.weight": t(2, h),
        "embeddings.LayerNorm.weight": 1 + t(h) / 5,
        "embeddings.LayerNorm.bias": t(h) / 5,
    }
    for i in range(CONFIG["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name, (out, into) in {
            "attention.self.query": (h, h),
            "attention.self.key": (h, h),
            "attention.self.value": (h, h),
            "attention.output.dense": (h, h),
            "intermediate.dense": (inner, h),
            "output.dense": (h, inner),
        }.items():
            w[p + name + ".weight"] = t(out, into)  # stored (out, in), as PyTorch does
            w[p + name + ".bias"] = t(out) / 5
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + norm + ".weight"] = 1 + t(h) / 5
            w[p + norm + ".bias"] = t(h) / 5
    save_file(w, str(path / "model.safetensors"))
    return path, w, tok


def reference_vector(weights, tok, text):
    """One sentence through BERT the plain way: no batch, no padding, one head at a time."""
    ids = tok.encode(text).ids
    w = {k: v.astype(np.float64) for k, v in weights.items()}

    def norm(x, name):
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    heads, size = CONFIG["num_attention_heads"], CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
    for i in range(CONFIG["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (dense(x, p + "attention.self." + n) for n in ("query", "key", "value"))
        parts = []
        for hd in range(heads):
            cols = slice(hd * size, (hd + 1) * size)
            s = q[:, cols] @ k[:, cols].T / math.sqrt(size)
            a = np.exp(s - s.max(1, keepdims=True))
            parts.append((a / a.sum(1, keepdims=True)) @ v[:, cols])
        x = norm(x + dense(np.hstack(parts), p + "attention.output.dense"), p + "attention.output.LayerNorm")
        y = dense(x, p + "intermediate.dense")
        y = y * 0.5 * (1 + np.vectorize(math.erf)(y / math.sqrt(2)))
        x = norm(x + dense(y, p + "output.dense"), p + "output.LayerNorm")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def test_the_numpy_bert_equals_a_plain_one_sentence_at_a_time(tiny_bert):
    path, weights, tok = tiny_bert
    example = load_example("embedder_minilm")
    embed = example.MiniLMEmbedder(path, batch_size=3)
    texts = [
        "convert money",
        "how many flights to the city in the rain for my meeting",
        "send email",
        "translate text",
        "",
        "weather",
        "book a plane",
    ]
    got = np.array(embed(texts))
    assert got.shape == (len(texts), CONFIG["hidden_size"])
    want = np.array([reference_vector(weights, tok, t) for t in texts])
    # Padding (texts of different lengths share batches) must not change any vector.
    assert np.abs(got - want).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)
    assert embed(["send email"])[0] == embed(texts)[2]


def test_the_local_model_example_embeds_each_text_once_across_runs(tiny_bert, tmp_path):
    env = {"AGENTMAKER_MINILM_DIR": str(tiny_bert[0]), "AGENTMAKER_EMBEDDING_CACHE": str(tmp_path / "m.emb")}
    first = run_example("embedder_minilm", env)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert len(lines) == 4
    assert re.fullmatch(r"'is it going to rain in Oslo\?' -> \['\w+', '\w+'\]", lines[0]), lines
    assert lines[3] == f"embedded 9 texts with the model, 0 came from {tmp_path / 'm.emb'}"
    second = run_example("embedder_minilm", env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[:3] == lines[:3]
    assert (
        second.stdout.splitlines()[3] == f"embedded 0 texts with the model, 9 came from {tmp_path / 'm.emb'}"
    )


def test_the_local_model_example_says_what_is_missing(tmp_path):
    proc = run_example("embedder_minilm", {"AGENTMAKER_MINILM_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        f"all-MiniLM-L6-v2 is not available here: AGENTMAKER_MINILM_DIR={tmp_path} lacks one of "
        "config.json, tokenizer.json, model.safetensors. Nothing to do.\n"
    )


# ------------------------------------------------------------------ an embeddings API on loopback


def bag_of_words(text, dim=64):
    v = [0.0] * dim
    for word in re.findall(r"[a-z]+", text.lower()):
        v[zlib.crc32(word.encode()) % dim] += 1.0
    return v


class EmbeddingsServer:
    """POST /v1/embeddings the OpenAI way; ``mode`` makes it misbehave."""

    def __init__(self):
        self.requests = []
        self.mode = "ok"
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append((self.path, self.headers.get("Authorization"), body))
                if self.path != "/v1/embeddings" or server.mode == "500":
                    return self.reply(500, b'{"error": {"message": "model overloaded"}}')
                items = [
                    {"object": "embedding", "index": i, "embedding": bag_of_words(t)}
                    for i, t in enumerate(body["input"])
                ]
                if server.mode == "short":
                    items = items[:-1]
                if server.mode == "reversed":
                    items.reverse()
                if server.mode == "not-json":
                    return self.reply(200, b"<html>proxy login</html>")
                self.reply(
                    200, json.dumps({"object": "list", "data": items, "model": body["model"]}).encode()
                )

            def reply(self, status, payload):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def api():
    server = EmbeddingsServer()
    yield server
    server.close()


def test_the_api_example_sends_the_catalog_once_across_runs(api, tmp_path):
    env = {
        "AGENTMAKER_EMBEDDINGS_URL": api.url,
        "AGENTMAKER_EMBEDDINGS_MODEL": "bow-64",
        "OPENAI_API_KEY": "sk-test",
        "AGENTMAKER_EMBEDDING_CACHE": str(tmp_path / "api.emb"),
    }
    first = run_example("embedder_openai_compatible", env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "'where is my package' -> ['track_parcel']",
        "'I forgot my password' -> ['reset_password']",
        "embedded 6 texts through the API, 0 came from the cache",
    ]
    paths = {(p, auth, body["model"]) for p, auth, body in api.requests}
    assert paths == {("/v1/embeddings", "Bearer sk-test", "bow-64")}
    sent = [t for _, _, body in api.requests for t in body["input"]]
    assert len(sent) == 6 and sum("track_parcel" in t for t in sent) == 1
    api.requests.clear()
    second = run_example("embedder_openai_compatible", env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[:2] == first.stdout.splitlines()[:2]
    assert second.stdout.splitlines()[2] == "embedded 0 texts through the API, 6 came from the cache"
    assert api.requests == []


def test_the_api_example_without_an_endpoint_says_so():
    env = {k: v for k, v in os.environ.items() if k != "AGENTMAKER_EMBEDDINGS_URL"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "embedder_openai_compatible.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("AGENTMAKER_EMBEDDINGS_URL is not set")


def test_the_api_embedder_batches_and_orders_by_index(api):
    example = load_example("embedder_openai_compatible")
    embed = example.OpenAICompatibleEmbedder(api.url, "bow-64", batch_size=2)
    api.mode = "reversed"
    texts = ["send email", "book a flight", "weather in Paris"]
    assert embed(texts) == [bag_of_words(t) for t in texts]
    assert [body["input"] for _, _, body in api.requests] == [texts[:2], texts[2:]]
    assert api.requests[0][1] is None  # no key, no Authorization header


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("500", r"/v1/embeddings answered HTTP 500: \{\"error\": \{\"message\": \"model overloaded\""),
        ("short", r"returned 1 embeddings for 2 texts"),
        ("not-json", r"did not answer JSON"),
    ],
)
def test_the_api_embedder_reports_a_bad_endpoint_clearly(api, mode, message):
    example = load_example("embedder_openai_compatible")
    api.mode = mode
    with pytest.raises(example.EmbeddingAPIError, match=message):
        example.OpenAICompatibleEmbedder(api.url, "bow-64")(["a", "b"])


def test_the_api_embedder_reports_an_unreachable_endpoint(api):
    example = load_example("embedder_openai_compatible")
    url = api.url
    api.close()
    with pytest.raises(
        example.EmbeddingAPIError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1/embeddings"
    ):
        example.OpenAICompatibleEmbedder(url, "m", timeout=5)(["a"])
    with pytest.raises(ValueError, match="base_url must be an http"):
        example.OpenAICompatibleEmbedder("127.0.0.1:8080", "m")
