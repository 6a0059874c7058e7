"""``HashingEmbedder``: the offline embedder (numpy only, no download, no network, no fitted state).

The demo, the tests and CI retrieve with it. It is a lexical smoke-test baseline, not a
semantic model: a real evaluation uses the paper's ``text-embedding-3-small`` through
``litellm_embedder.py`` (``EvalConfig`` refuses the offline embedder with real models unless
it is chosen explicitly).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from functools import lru_cache
from typing import Sequence

import numpy as np

__all__ = ["HashingEmbedder"]

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
    store_vectors = False
    """Never written to disk (``cached_embed``): a personality's ~700 training questions embed in
    ~40 ms, while their matrix is ~1.4 MB (2 KB per question, more than a cached model call)."""

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
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for row, text in enumerate(texts):
            for feat, tf in self._features(text).items():
                idx, sign = _bucket(feat, self.dim)
                rows.append(row)
                cols.append(idx)
                vals.append(sign * (1.0 + math.log(tf)))
        # One unbuffered scatter-add in the same order as a per-feature loop (so colliding features
        # sum to the same floats): numpy's per-element indexing was most of the embedder's time.
        np.add.at(out, (np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)), np.asarray(vals))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0.0, norms, 1.0)
        return out.astype(np.float32)

