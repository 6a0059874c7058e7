"""Embeddings from any litellm embedding model (the paper's ``text-embedding-3-small``).

Implements the ``Embedder`` protocol (``_protocol.py``) on top of ``Gateway.embed``: the model is a
``ModelConfig`` like every other role, so its timeout, retries, key variable and concurrency come
from the configuration, each text's vector is stored in the gateway's cache (table ``embeddings``,
keyed by the model identity and the text) with a lease per request, errors are redacted and typed
(``llm.embedding.EmbeddingError``), and tokens and cost land in the gateway's ``stats``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..llm.types import ModelConfig

if TYPE_CHECKING:
    from ..llm.cache import Cache
    from ..llm.gateway import Gateway

__all__ = ["LiteLLMEmbedder"]


class LiteLLMEmbedder:
    """Texts in, L2-normalised float32 rows out, via the gateway; cached per text.

    Args:
        model: a ``ModelConfig`` (``EvalConfig.effective_embedding``), or a litellm embedding model
            string, e.g. ``openai/text-embedding-3-small``, completed by the keyword arguments.
        api_base, api_key_env, dimensions, timeout_s, max_retries, max_total_wait_s: with a model
            string only: the fields of the ``ModelConfig`` built from it (``dimensions`` goes to
            ``extra_params``: it changes the vectors, so it is in ``name`` and the cache key).
        batch_size: texts per request.
        gateway: whose cache, leases and ledger to use; default a new ``Gateway`` on ``cache``.
        cache: with no ``gateway`` only: where vectors persist; ``None`` caches nothing.
    """

    def __init__(self, model: str | ModelConfig, api_base: str | None = None, api_key_env: str | None = None,
                 batch_size: int = 256, cache: Cache | None = None, dimensions: int | None = None,
                 timeout_s: float = 120.0, max_retries: int = 6, max_total_wait_s: float = 600.0,
                 gateway: Gateway | None = None):
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if isinstance(model, str):
            model = ModelConfig(model=model, api_base=api_base, api_key_env=api_key_env, timeout_s=timeout_s,
                                max_retries=max_retries, max_total_wait_s=max_total_wait_s,
                                extra_params={"dimensions": dimensions} if dimensions else {})
        if gateway is None:
            from ..llm.gateway import Gateway  # noqa: PLC0415 - the offline path never builds one

            gateway = Gateway(cache=cache)
        self.config = model
        self.gateway = gateway
        self.batch_size = batch_size
        from ..llm.secrets import redact_url  # noqa: PLC0415

        base = redact_url(model.api_base)  # the name is shown in the report: no token from the URL
        dims = model.extra_params.get("dimensions")
        self.name = f"litellm:{model.model}{f'#{dims}' if dims else ''}{f'@{base}' if base else ''}"
        """Model, dimensions and server: what changes the vectors (timeouts and retries do not)."""

    @property
    def model(self) -> str:
        return self.config.model

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.name!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text (duplicates embedded once); only texts missing from the cache are sent.

        Raises:
            EmbeddingError: the provider failed the request after the retry policy (redacted message).
        """
        return self.gateway.embed(self.config, list(texts), batch_size=self.batch_size)
