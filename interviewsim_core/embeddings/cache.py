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

    Only for embedders worth it (``store_vectors``, see ``cached_embed``): the offline hashing
    embedder's matrices are recomputed rather than stored.

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

    def get(self, embedder_name: str, texts: Sequence[str], *, disk: bool = True) -> np.ndarray | None:
        """The stored matrix for exactly these texts under this embedder, or None.

        ``disk=False``: only this process's memo (vectors that are never written, see ``put``).
        """
        key = texts_digest(embedder_name, texts)
        if key in self._memo:
            return self._memo[key]
        if not disk:
            return None
        path = self.directory / _safe_dirname(embedder_name) / f"{key}.npy"
        try:
            arr = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if arr.ndim != 2 or arr.shape[0] != len(texts) or arr.dtype != np.float32:
            return None
        self._remember(key, arr)
        return arr

    def put(self, embedder_name: str, texts: Sequence[str], matrix: np.ndarray, *, disk: bool = True) -> Path:
        """Store ``matrix`` (one row per text) atomically; returns the file path.

        ``disk=False`` keeps it in this process's memo only (the returned path is not written).
        """
        matrix = np.array(matrix, dtype=np.float32, copy=True)  # the memo must not alias the caller's array
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise ValueError(f"matrix of shape {matrix.shape} does not match {len(texts)} texts")
        path = self.path_for(embedder_name, texts)
        if disk:
            atomic_write(path, lambda fh: np.save(fh, matrix, allow_pickle=False))
        self._remember(path.stem, matrix)
        return path

    def _remember(self, key: str, arr: np.ndarray) -> None:
        arr.setflags(write=False)  # shared between callers: nobody may edit a cached matrix
        if len(self._memo) >= self._memo_size:
            self._memo.pop(next(iter(self._memo)))
        self._memo[key] = arr


def cached_embed(embedder: Embedder, texts: Sequence[str], cache: EmbeddingCache | None) -> np.ndarray:
    """``embedder.embed(texts)``, served from ``cache`` when these exact texts were embedded before.

    An embedder with ``store_vectors = False`` (the offline ``HashingEmbedder``) is served from the
    cache's in-process memo only: its matrices are never written to disk.
    """
    texts = list(texts)
    disk = bool(getattr(embedder, "store_vectors", True))
    if cache is not None:
        hit = cache.get(embedder.name, texts, disk=disk)
        if hit is not None:
            return hit
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(texts):
        raise ValueError(
            f"embedder {embedder.name!r} returned shape {matrix.shape} for {len(texts)} texts"
        )
    if cache is not None:
        cache.put(embedder.name, texts, matrix, disk=disk)
    return matrix
