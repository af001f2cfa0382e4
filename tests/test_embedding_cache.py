"""agentmaker.rag.CachedEmbedder: vectors on disk, reused by later processes, robust to bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from array import array

import pytest
from agentmaker.rag import CachedEmbedder, HybridRetriever


def letters(texts: list[str]) -> list[list[float]]:
    """A tiny deterministic embedder: counts of a few letters."""
    return [[float(t.count(c)) + 0.5 for c in "aeiou"] for t in texts]


class Counting:
    def __init__(self, fn=letters):
        self.fn = fn
        self.seen: list[str] = []

    def __call__(self, texts):
        self.seen.extend(texts)
        return self.fn(texts)


def as_f32(rows):
    return [array("f", r).tolist() for r in rows]


# A script run as its own process: embeds the texts given as arguments through a cache and
# prints what the model was asked for and the vectors it got.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    from agentmaker.rag import CachedEmbedder

    asked = []
    def embed(texts):
        asked.extend(texts)
        return [[float(len(t)), float(t.count("a")), 1.0] for t in texts]

    cache = CachedEmbedder(embed, sys.argv[1], model_id="toy-v1")
    one_by_one = sys.argv[2] == "1"
    texts = sys.argv[3:]
    vectors = [cache([t])[0] for t in texts] if one_by_one else cache(texts)
    print(json.dumps({"asked": asked, "vectors": vectors, "hits": cache.hits}))
    """
)


def run_script(tmp_path, cache_file, texts, one_by_one=False):
    script = tmp_path / "embed_script.py"
    script.write_text(SCRIPT)
    proc = subprocess.run(
        [sys.executable, "-W", "error", str(script), str(cache_file), "1" if one_by_one else "0", *texts],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_new_process_reads_the_vectors_instead_of_calling_the_model(tmp_path):
    cache_file = tmp_path / "cache" / "minilm.emb"  # the directory is created on first write
    texts = ["create a calendar event", "send an email", "convert currency", "send an email"]
    first = run_script(tmp_path, cache_file, texts)
    assert first["asked"] == ["create a calendar event", "send an email", "convert currency"]
    assert first["hits"] == 1  # the repeated text within one call is computed once
    second = run_script(tmp_path, cache_file, texts)
    assert second["asked"] == []
    assert second["hits"] == 4
    assert second["vectors"] == first["vectors"]
    assert first["vectors"][0] == [23.0, 4.0, 1.0]
    # A changed catalog: only the new text reaches the model.
    third = run_script(tmp_path, cache_file, ["send an email", "book a room"])
    assert third["asked"] == ["book a room"]
    assert sorted(os.listdir(cache_file.parent)) == ["minilm.emb", "minilm.emb.lock"]


def test_hybrid_retriever_over_a_cache_indexes_without_the_model_the_second_time(tmp_path):
    ids = ["calendar", "mail", "money"]
    docs = ["create a calendar event", "send an email message", "convert an amount of money"]
    path = tmp_path / "c.emb"
    model = Counting()
    r1 = HybridRetriever(CachedEmbedder(model, path, model_id="letters"), alpha=0.5)
    r1.add(ids, docs)
    hits1 = [(h.id, h.score) for h in r1.search("send email", top_k=3)]
    assert model.seen[:3] == docs
    model2 = Counting()
    cache2 = CachedEmbedder(model2, path, model_id="letters")
    r2 = HybridRetriever(cache2, alpha=0.5)
    r2.add(ids, docs)
    assert [(h.id, h.score) for h in r2.search("send email", top_k=3)] == hits1
    assert model2.seen == []  # the catalog and the query were all on disk
    assert (cache2.hits, cache2.misses, len(cache2), cache2.dim) == (4, 0, 4, 5)


def test_vectors_are_float32_on_a_miss_and_on_a_hit(tmp_path):
    third = [[1 / 3, 2 / 3]]
    cache = CachedEmbedder(lambda texts: third, tmp_path / "c", model_id="m")
    got = cache(["x"])
    assert got == as_f32(third) and got != third
    assert CachedEmbedder(letters, tmp_path / "c", model_id="m")(["x"]) == got


@pytest.mark.parametrize(
    "garbage",
    [b"", b"not a cache at all", b"agentmaker-embedding-cache\n{bad json\n", b"agentmaker-embedding-cache\n"],
    ids=["empty", "other-file", "bad-header", "cut-header"],
)
def test_a_file_that_is_not_a_cache_is_ignored_with_a_warning_and_rewritten(tmp_path, garbage):
    path = tmp_path / "c.emb"
    path.write_bytes(garbage)
    model = Counting()
    with pytest.warns(RuntimeWarning, match=r"ignoring the embedding cache .*c\.emb: it does not|its header"):
        cache = CachedEmbedder(model, path, model_id="m")
    assert cache(["abc", "eel"]) == as_f32(letters(["abc", "eel"]))
    assert model.seen == ["abc", "eel"]
    assert path.read_bytes().startswith(b"agentmaker-embedding-cache\n{")
    model2 = Counting()
    assert CachedEmbedder(model2, path, model_id="m")(["eel"]) == as_f32(letters(["eel"]))
    assert model2.seen == []
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []  # no temp file left


def test_damaged_and_cut_off_records_are_dropped_and_the_file_repaired(tmp_path):
    path = tmp_path / "c.emb"
    CachedEmbedder(letters, path, model_id="m")(["aa", "ee", "ii"])
    data = bytearray(path.read_bytes())
    record = 32 + 4 * 5 + 4
    header = len(data) - 3 * record
    data[header + record + 40] ^= 0xFF  # a flipped bit inside the second record's vector
    path.write_bytes(bytes(data) + b"\x01\x02\x03")  # and a writer that died mid-record
    model = Counting()
    cache = CachedEmbedder(model, path, model_id="m")
    assert len(cache) == 2
    assert cache(["aa", "ee", "ii"]) == as_f32(letters(["aa", "ee", "ii"]))
    assert model.seen == ["ee"]  # only the damaged record was computed again
    assert len(path.read_bytes()) == header + 3 * record  # rewritten clean, no tail left
    assert len(CachedEmbedder(Counting(), path, model_id="m")) == 3


def test_a_file_of_another_model_is_refused(tmp_path):
    path = tmp_path / "c.emb"
    CachedEmbedder(letters, path, model_id="model-a")(["x"])
    with pytest.raises(ValueError, match=r"holds vectors of model 'model-a', not 'model-b': give each model"):
        CachedEmbedder(letters, path, model_id="model-b")


def test_a_model_that_changed_its_dimension_under_the_same_id_is_an_error(tmp_path):
    path = tmp_path / "c.emb"
    CachedEmbedder(letters, path, model_id="m")(["x"])
    wider = CachedEmbedder(lambda texts: [[1.0] * 8 for _ in texts], path, model_id="m")
    assert wider(["x"]) == as_f32(letters(["x"]))  # a hit needs no model call
    with pytest.raises(ValueError, match=r"returned 8-dimensional vectors but the cache .* holds 5-dim"):
        wider(["new text"])
    assert len(CachedEmbedder(letters, path, model_id="m")) == 1  # nothing of the bad call was stored


@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        ([[1.0]], ValueError, "returned 1 vectors for 2 texts"),
        ([[1.0], [float("nan")]], ValueError, "NaN or infinite"),
        ([[1.0], [1.0, 2.0]], ValueError, "different lengths"),
        ([[1.0], []], ValueError, "empty vector"),
        ([[1.0], ["x"]], TypeError, "one sequence of numbers per text"),
        (None, TypeError, "one sequence of numbers per text"),
    ],
)
def test_bad_model_output_is_refused_and_not_cached(tmp_path, reply, error, message):
    cache = CachedEmbedder(lambda texts: reply, tmp_path / "c.emb", model_id="m")
    with pytest.raises(error, match=message):
        cache(["a", "b"])
    assert len(cache) == 0 and not (tmp_path / "c.emb").exists()


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="model_id must be a non-empty string"):
        CachedEmbedder(letters, tmp_path / "c", model_id=" ")
    with pytest.raises(TypeError, match="embedder must be a callable"):
        CachedEmbedder("letters", tmp_path / "c", model_id="m")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is a directory"):
        CachedEmbedder(letters, tmp_path, model_id="m")
    cache = CachedEmbedder(letters, tmp_path / "c", model_id="m")
    with pytest.raises(TypeError, match="list of strings"):
        cache("abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="only strings"):
        cache(["a", 1])  # type: ignore[list-item]
    assert cache([]) == []


def test_concurrent_writers_lose_nothing_and_leave_a_valid_file(tmp_path):
    path = tmp_path / "c.emb"
    path.write_bytes(b"junk that both writers must replace")
    script = tmp_path / "embed_script.py"
    script.write_text(SCRIPT)
    procs = []
    for who in ("left", "right"):
        texts = [f"{who} text {i} {'a' * (i % 7)}" for i in range(150)]
        procs.append(
            (
                texts,
                subprocess.Popen(
                    [sys.executable, "-W", "ignore::RuntimeWarning", str(script), str(path), "1", *texts],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    every: list[str] = []
    for texts, proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out)["asked"] == texts
        every += texts
    asked: list[str] = []
    cache = CachedEmbedder(lambda t: asked.extend(t) or [[0.0, 0.0, 1.0]] * len(t), path, model_id="toy-v1")
    vectors = cache(every)
    assert asked == []  # all 300 vectors were on disk, from both processes
    assert vectors == [[float(len(t)), float(t.count("a")), 1.0] for t in every]
