"""Embeddings from any litellm embedding model (the paper's ``text-embedding-3-small``).

Implements the ``Embedder`` protocol (``_protocol.py``). Each text's vector is stored in the
gateway's SQLite cache (table ``embeddings``, keyed by the model identity and the text), so the
training questions of a personality are embedded once per model, across runs and processes.
Calls go through ``litellm.aembedding`` with the gateway's retry policy; the key is read from
the environment at call time and never stored.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ..errors import GatewayError
from ..llm.cache import Cache, NullCache, embedding_key
from ..llm.retry import retrying
from ..llm.transport import litellm_module, shared_runner

__all__ = ["LiteLLMEmbedder"]


class LiteLLMEmbedder:
    """Texts in, L2-normalised float32 rows out, via litellm; cached per text.

    Args:
        model: litellm embedding model string, e.g. ``openai/text-embedding-3-small``.
        api_base: base URL of an OpenAI-compatible server, if not the provider's default.
        api_key_env: environment variable holding the key (read per call, never stored).
        batch_size: texts per request.
        cache: where vectors persist (the gateway's ``SqliteCache``); ``None`` caches nothing.
        dimensions: output size for models that support shortening (changes the vectors, so it
            is part of ``name`` and of the cache key).
    """

    def __init__(self, model: str, api_base: str | None = None, api_key_env: str | None = None,
                 batch_size: int = 256, cache: Cache | None = None, dimensions: int | None = None,
                 timeout_s: float = 120.0, max_retries: int = 6, max_total_wait_s: float = 600.0):
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.model = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.batch_size = batch_size
        self.cache = cache if cache is not None else NullCache()
        self.dimensions = dimensions
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_total_wait_s = max_total_wait_s
        self.requests_made = 0
        suffix = f"@{api_base}" if api_base else ""
        dims = f"#{dimensions}" if dimensions else ""
        self.name = f"litellm:{model}{dims}{suffix}"

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.name!r})"

    def _identity(self) -> dict[str, Any]:
        return {"model": self.model, "api_base": self.api_base, "dimensions": self.dimensions}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text (duplicates embedded once); only texts missing from the cache are sent."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        identity = self._identity()
        keys = [embedding_key(identity, t) for t in texts]
        unique = dict(zip(keys, texts))
        found = self.cache.get_vectors(list(unique))
        missing = [(k, t) for k, t in unique.items() if k not in found]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start:start + self.batch_size]
            vectors = shared_runner().run(self._aembed([t for _, t in batch]))
            fresh = {k: v for (k, _), v in zip(batch, vectors)}
            self.cache.put_vectors(self.model, fresh)
            found.update(fresh)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    async def _aembed(self, batch: list[str]) -> list[np.ndarray]:
        litellm = litellm_module()
        kwargs: dict[str, Any] = {"timeout": self.timeout_s}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env and os.environ.get(self.api_key_env):
            kwargs["api_key"] = os.environ[self.api_key_env]
        if self.dimensions:
            kwargs["dimensions"] = self.dimensions
        response = None
        async for attempt in retrying(self.max_retries, self.max_total_wait_s):
            with attempt:
                self.requests_made += 1
                response = await litellm.aembedding(model=self.model, input=batch, max_retries=0, **kwargs)
        rows = sorted(response.data, key=lambda d: _get(d, "index"))
        if len(rows) != len(batch):
            raise GatewayError(f"{self.model}: {len(rows)} embeddings for {len(batch)} texts")
        return [_normalise(np.asarray(_get(d, "embedding"), dtype=np.float32)) for d in rows]


def _get(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, dict) else getattr(item, name)


def _normalise(v: np.ndarray) -> np.ndarray:
    """Unit L2 norm so cosine similarity is a dot product; an all-zero vector stays zero."""
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
