"""``EmbeddingCache``: embedding matrices on disk, keyed by embedder name and the exact text list."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Sequence

import numpy as np

from ..atomic_files import atomic_write
from ._protocol import Embedder

__all__ = ["EmbeddingCache", "cached_embed", "texts_digest"]


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
