"""A disk cache in front of an embedder, so an unchanged catalog is not embedded again.

:class:`CachedEmbedder` wraps any embedder (``list[str] -> list[list[float]]``) and keeps
every vector it computes in one file, keyed by the sha256 of the text; the file also records
the model's identity and the vector length. A new process that embeds the same texts with the
same ``model_id`` reads them from the file and never calls the model.

Decisions, for inputs a cache must survive:

- **One model per file.** The header names the ``model_id``; opening a file written for another
  model raises :class:`ValueError` (two models' vectors must never mix). If the embedder starts
  returning vectors of another length than the file holds, that is the same mistake (a new
  model under an old ``model_id``) and raises too.
- **Corrupt files are a cache miss, not an error.** A file that is not a cache (bad magic or
  header) is ignored with a :class:`RuntimeWarning` and replaced on the next write. Each record
  carries a CRC-32: damaged records are dropped, a cut-off last record (a writer that died) is
  ignored, and the file is rewritten clean on the next write.
- **Concurrent writers.** New vectors are appended as whole records under an exclusive lock on
  ``<path>.lock`` (POSIX ``flock``); a rewrite goes to a temporary file in the same directory
  that replaces the cache atomically (``os.replace``), so a reader sees the old file or the new
  one, never half of one. Two processes may both compute a text neither had: the later record
  wins, and both are equal. Where ``fcntl`` does not exist (Windows) there is no lock: records
  are still whole and checked, but one writer's appends may be lost to another's rewrite.
- **Vectors are stored as float32** and returned as float32 values on a hit and on a miss alike,
  so a first run and a cached run rank identically.
- Every text is cached, queries included, so the file grows with distinct queries; delete it
  to start over (it is only a cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import struct
import tempfile
import threading
import warnings
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["CachedEmbedder"]

_MAGIC = b"agentmaker-embedding-cache\n"
_FORMAT = 1
_DIGEST = 32
_CRC = struct.Struct("<I")


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _header(model_id: str, dim: int) -> bytes:
    meta = {"format": _FORMAT, "model_id": model_id, "dim": dim}
    return _MAGIC + json.dumps(meta, ensure_ascii=True, sort_keys=True).encode() + b"\n"


def _record(digest: bytes, vector: array[float]) -> bytes:
    body = digest + vector.tobytes()
    return body + _CRC.pack(zlib.crc32(body))


class _Parsed:
    """What a cache file holds: its header and records, and whether it needs a clean rewrite."""

    __slots__ = ("dim", "header_len", "model_id", "needs_rewrite", "problem", "vectors")

    def __init__(self) -> None:
        self.model_id: str | None = None
        self.dim: int | None = None
        self.header_len = 0
        self.vectors: dict[bytes, array[float]] = {}
        self.needs_rewrite = False
        self.problem: str | None = None  # set when the file is not a cache at all


def _parse(data: bytes) -> _Parsed:
    out = _Parsed()
    if not data.startswith(_MAGIC):
        out.problem = "it does not start with the cache's magic line"
        return out
    end = data.find(b"\n", len(_MAGIC))
    try:
        if end < 0:
            raise ValueError("the header line is cut off")
        meta = json.loads(data[len(_MAGIC) : end])
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise ValueError(f"unknown format {meta.get('format') if isinstance(meta, dict) else meta!r}")
        model_id, dim = meta.get("model_id"), meta.get("dim")
        if not isinstance(model_id, str) or isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError("the header lacks a model_id or a positive dim")
    except ValueError as exc:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        out.problem = f"its header is unreadable ({exc})"
        return out
    out.model_id, out.dim, out.header_len = model_id, dim, end + 1
    size = _DIGEST + 4 * dim + _CRC.size
    body = memoryview(data)[end + 1 :]
    whole = len(body) - len(body) % size
    if whole != len(body):
        out.needs_rewrite = True  # a writer died mid-record
    for start in range(0, whole, size):
        rec = body[start : start + size]
        if _CRC.unpack_from(rec, size - _CRC.size)[0] != zlib.crc32(rec[: size - _CRC.size]):
            out.needs_rewrite = True
            continue
        vector = array("f")
        vector.frombytes(rec[_DIGEST : size - _CRC.size])
        key = bytes(rec[:_DIGEST])
        if key in out.vectors:
            out.needs_rewrite = True  # duplicates from concurrent writers: compact them
        out.vectors[key] = vector
    return out


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    with open(str(path) + ".lock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _check_vectors(vectors: Any, count: int) -> list[array[float]]:
    try:
        rows = [array("f", [float(x) for x in v]) for v in vectors]
    except (TypeError, ValueError, OverflowError) as exc:
        raise TypeError(
            f"the embedder must return one sequence of numbers per text, got {type(vectors).__name__}: {exc}"
        ) from None
    if len(rows) != count:
        raise ValueError(f"the embedder returned {len(rows)} vectors for {count} texts")
    for row in rows:
        if not row:
            raise ValueError("the embedder returned an empty vector")
        if len(row) != len(rows[0]):
            raise ValueError(
                f"the embedder returned vectors of different lengths ({len(rows[0])} and {len(row)})"
            )
        if not all(math.isfinite(x) for x in row):
            raise ValueError("the embedder returned a vector with NaN or infinite values")
    return rows


class CachedEmbedder:
    """``embedder`` with its vectors kept in the file ``path`` (created with its directory on
    the first write), so texts embedded once are never embedded again by any process.

    ``model_id`` names the model (for example ``"sentence-transformers/all-MiniLM-L6-v2"``, or
    the endpoint and model name of a remote API): it is stored in the file, and a file written
    for another model is refused. Change it whenever the vectors would change.

    It is itself an embedder: give it to ``HybridRetriever(embedder=...)``. ``hits`` and
    ``misses`` count the texts served from the cache and computed by ``embedder``.
    """

    def __init__(
        self,
        embedder: Callable[[list[str]], Sequence[Sequence[float]]],
        path: str | os.PathLike[str],
        *,
        model_id: str,
    ) -> None:
        if not callable(embedder):
            raise TypeError(f"embedder must be a callable list[str] -> list[list[float]], got {embedder!r}")
        if not isinstance(model_id, str) or not model_id.strip():
            raise ValueError(f"model_id must be a non-empty string naming the model, got {model_id!r}")
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a file path, got {path!r}")
        self.embedder = embedder
        self.model_id = model_id
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise ValueError(f"path must name a file, but {self.path} is a directory")
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._vectors: dict[bytes, array[float]] = {}
        self._dim: int | None = None
        self._rewrite = False
        self._load()

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.model_id!r}, {str(self.path)!r}, {len(self._vectors)} vectors)"

    def __len__(self) -> int:
        return len(self._vectors)

    @property
    def dim(self) -> int | None:
        """The vector length of this model (None until the file or the embedder says)."""
        return self._dim

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        parsed = _parse(data)
        if parsed.problem is not None:
            warnings.warn(
                f"ignoring the embedding cache {self.path}: {parsed.problem}; it will be rewritten",
                RuntimeWarning,
                stacklevel=3,
            )
            self._rewrite = True
            return
        if parsed.model_id != self.model_id:
            raise ValueError(
                f"the embedding cache {self.path} holds vectors of model {parsed.model_id!r}, not "
                f"{self.model_id!r}: give each model its own cache file (or delete this one)"
            )
        self._vectors, self._dim, self._rewrite = parsed.vectors, parsed.dim, parsed.needs_rewrite

    def __call__(self, texts: list[str]) -> list[list[float]]:
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise TypeError(f"texts must be a list of strings, got {texts!r}")
        keys = []
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"texts must contain only strings, got {t!r}")
            keys.append(_digest(t))
        with self._lock:
            found = {k: self._vectors[k] for k in keys if k in self._vectors}
        todo: dict[bytes, str] = {}
        for k, t in zip(keys, texts):
            if k not in found:
                todo.setdefault(k, t)
        if todo:
            rows = _check_vectors(self.embedder(list(todo.values())), len(todo))
            fresh = dict(zip(todo, rows))
            with self._lock:
                dim = len(rows[0])
                if self._dim is not None and dim != self._dim:
                    raise ValueError(
                        f"the embedder returned {dim}-dimensional vectors but the cache {self.path} holds "
                        f"{self._dim}-dimensional ones for model {self.model_id!r}: the model changed, so "
                        "give it a new model_id (or delete the cache file)"
                    )
                self._dim = dim
                self._vectors.update(fresh)
                self._save(fresh)
            found.update(fresh)
        with self._lock:
            self.hits += len(keys) - len(todo)
            self.misses += len(todo)
        return [found[k].tolist() for k in keys]

    def _save(self, fresh: dict[bytes, array[float]]) -> None:
        assert self._dim is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path):
            if not self._rewrite and self._append(fresh):
                return
            # Rewrite: what the file holds now (another process may have added records), then ours.
            try:
                parsed = _parse(self.path.read_bytes())
            except FileNotFoundError:
                parsed = _Parsed()
            merged = parsed.vectors if parsed.model_id == self.model_id and parsed.dim == self._dim else {}
            merged.update(self._vectors)
            self._replace(
                b"".join([_header(self.model_id, self._dim), *map(_record, merged, merged.values())])
            )
            self._rewrite = False

    def _append(self, fresh: dict[bytes, array[float]]) -> bool:
        """Appends whole records to a valid file of this model; False when it must be rewritten."""
        assert self._dim is not None
        header = _header(self.model_id, self._dim)
        size = _DIGEST + 4 * self._dim + _CRC.size
        try:
            f = open(self.path, "r+b")  # noqa: SIM115 - closed by the with below
        except FileNotFoundError:
            return False
        with f:
            if f.read(len(header)) != header:
                return False
            end = f.seek(0, os.SEEK_END)
            whole = end - (end - len(header)) % size
            if whole != end:
                f.truncate(whole)  # a record cut off by a writer that died; we hold the lock
            f.seek(whole)
            f.write(b"".join(map(_record, fresh, fresh.values())))
        return True

    def _replace(self, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
