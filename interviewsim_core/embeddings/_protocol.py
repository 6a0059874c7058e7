"""The ``Embedder`` protocol every retrieval embedder implements.

Retrieval ranks training questions by cosine similarity to a new question. Every embedder
returns float32 rows with unit L2 norm, so cosine similarity is a plain dot product and a
whole personality's retrieval is one matrix product (``strategies/retrieval.py``).
"""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import numpy as np

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one L2-normalised float32 row per text out.

    ``name`` identifies the model and every setting that changes its vectors: it is part of
    the cache key, so two embedders that give different vectors must have different names.
    """

    name: str
    """An embedder may also set ``store_vectors = False`` (``HashingEmbedder`` does): its vectors are
    cheaper to recompute than to keep, so ``cached_embed`` memoises them in the process and never
    writes them to disk. Absent means True: a paid or slow model's vectors are always kept."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), d)``, dtype float32, rows of norm 1 (or 0)."""
        ...
