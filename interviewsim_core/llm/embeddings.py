"""Text embeddings for retrieval: the ``Embedder`` protocol, an offline default, a disk cache.

Retrieval ranks training questions by cosine similarity to a new question. Every embedder
returns float32 rows with unit L2 norm, so cosine similarity is a plain dot product and a
whole personality's retrieval is one matrix product (``strategies/retrieval.py``).

``HashingEmbedder`` needs no download, no network and no fitted state, so the demo, the tests
and CI retrieve with it; the paper's ``text-embedding-3-small`` goes through
``litellm_embedder.py``, which implements the same protocol.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..atomic_files import atomic_write

__all__ = ["Embedder", "HashingEmbedder", "EmbeddingCache", "cached_embed", "texts_digest"]


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one L2-normalised float32 row per text out.

    ``name`` identifies the model and every setting that changes its vectors: it is part of
    the cache key, so two embedders that give different vectors must have different names.
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), d)``, dtype float32, rows of norm 1 (or 0)."""
        ...


# Function words carry almost no topical signal but dominate short questions; without
# corpus-level IDF (see HashingEmbedder) dropping them is what keeps "what do you think of
# the tax bill" close to "the tax bill" rather than to "what do you think of the weather".
_STOPWORDS = frozenset(
    """a about an and are as at be been being but by can could did do does doing for from had has have
    having he her here hers him his how i if in into is it its just me my no nor not of on or our
    ours out over she should so some such than that the their theirs them then there these they
    this those to too under until up very was we were what when where which while who whom why
    will with would you your yours yourself mr mrs ms sir""".split()
)

_TOKEN = re.compile(r"\w+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


@lru_cache(maxsize=262_144)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """Stable (index, sign) for a feature: blake2b, never Python's salted ``hash()``.

    The sign halves the bias that colliding features add to dot products (signed feature
    hashing), which matters at small ``dim``.
    """
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


class HashingEmbedder:
    """Offline, deterministic bag-of-words embedder (hashed, sublinear tf, L2-normalised).

    Lowercased word tokens minus a small stopword list, optionally plus adjacent-token
    bigrams, hashed into ``dim`` signed buckets with weight ``1 + log(tf)``. It is stateless
    on purpose: no corpus IDF, because a text's vector must not depend on which other texts
    were embedded with it (the cache and the query-vs-training comparison rely on that).
    A text with no content token embeds to the zero row, which has similarity 0 to everything.

    It is a lexical smoke-test baseline, not a semantic model.
    """

    VERSION = 1

    def __init__(self, dim: int = 512, bigrams: bool = True):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = dim
        self.bigrams = bigrams
        self.name = f"hashing-v{self.VERSION}-d{dim}-{'uni+bi' if bigrams else 'uni'}"

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim}, bigrams={self.bigrams})"

    def _features(self, text: str) -> Counter[str]:
        toks = _tokens(text)
        feats: Counter[str] = Counter(toks)
        if self.bigrams:
            feats.update(f"{a} {b}" for a, b in zip(toks, toks[1:]))
        return feats

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for feat, tf in self._features(text).items():
                idx, sign = _bucket(feat, self.dim)
                out[row, idx] += sign * (1.0 + math.log(tf))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0.0, norms, 1.0)
        return out.astype(np.float32)


def texts_digest(embedder_name: str, texts: Sequence[str]) -> str:
    """sha256 over the embedder name and the exact ordered text list (the cache key)."""
    blob = json.dumps([embedder_name, list(texts)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _safe_dirname(name: str) -> str:
    # Model names contain "/" and ":"; keep them readable but filesystem-safe, and add a short
    # hash so two names that sanitise alike never share a directory.
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:80]
    return f"{readable}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:10]}"


class EmbeddingCache:
    """Embedding matrices on disk, one ``.npy`` per (embedder name, ordered text list).

    Used for the training questions of a personality, which every retrieval method and every
    question of that personality shares: computed once per personality and embedding model,
    then read back. Writes are atomic (temp file + ``os.replace``) so concurrent processes and
    crashes never leave a half-written matrix; an unreadable or mis-shaped file is a miss.
    A small in-process memo avoids re-reading the same file within one run.
    """

    def __init__(self, directory: str | os.PathLike[str], memo_size: int = 32):
        self.directory = Path(directory)
        self._memo: dict[str, np.ndarray] = {}
        self._memo_size = memo_size

    def path_for(self, embedder_name: str, texts: Sequence[str]) -> Path:
        return self.directory / _safe_dirname(embedder_name) / f"{texts_digest(embedder_name, texts)}.npy"

    def get(self, embedder_name: str, texts: Sequence[str]) -> np.ndarray | None:
        """The stored matrix for exactly these texts under this embedder, or None."""
        key = texts_digest(embedder_name, texts)
        if key in self._memo:
            return self._memo[key]
        path = self.directory / _safe_dirname(embedder_name) / f"{key}.npy"
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if arr.ndim != 2 or arr.shape[0] != len(texts) or arr.dtype != np.float32:
            return None
        self._remember(key, arr)
        return arr

    def put(self, embedder_name: str, texts: Sequence[str], matrix: np.ndarray) -> Path:
        """Store ``matrix`` (one row per text) atomically; returns the file path."""
        matrix = np.array(matrix, dtype=np.float32, copy=True)  # the memo must not alias the caller's array
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ValueError(f"matrix of shape {matrix.shape} does not match {len(texts)} texts")
        path = self.path_for(embedder_name, texts)
        atomic_write(path, lambda fh: np.save(fh, matrix, allow_pickle=False))
        self._remember(path.stem, matrix)
        return path

    def _remember(self, key: str, arr: np.ndarray) -> None:
        arr.setflags(write=False)  # shared between callers: nobody may edit a cached matrix
        if len(self._memo) >= self._memo_size:
            self._memo.pop(next(iter(self._memo)))
        self._memo[key] = arr


def cached_embed(embedder: Embedder, texts: Sequence[str], cache: EmbeddingCache | None) -> np.ndarray:
    """``embedder.embed(texts)``, served from ``cache`` when these exact texts were embedded before."""
    texts = list(texts)
    if cache is not None:
        hit = cache.get(embedder.name, texts)
        if hit is not None:
            return hit
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(texts):
        raise ValueError(
            f"embedder {embedder.name!r} returned shape {matrix.shape} for {len(texts)} texts"
        )
    if cache is not None:
        cache.put(embedder.name, texts, matrix)
    return matrix
