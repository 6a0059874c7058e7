"""The one place that turns an embedding setting (model, server) into an ``Embedder``.

The pipeline's retrieval, the report's overlap analysis and the premise label clustering all
build their embedder here, so the same setting always means the same vectors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._protocol import Embedder

if TYPE_CHECKING:
    from ..llm.gateway import Gateway
    from ..llm.types import ModelConfig

__all__ = ["OFFLINE_EMBEDDING", "embedder_for"]

OFFLINE_EMBEDDING = "offline/hashing"
"""Model string of the offline ``HashingEmbedder`` (numpy only, no download, no network)."""


def embedder_for(model: str | ModelConfig, api_base: str | None = None, gateway: Gateway | None = None) -> Embedder:
    """``HashingEmbedder`` for ``offline/hashing``, else a ``LiteLLMEmbedder`` (litellm imported only then).

    Args:
        model: ``offline/hashing``, a litellm embedding model string (e.g.
            ``openai/text-embedding-3-small``, with the ``ModelConfig`` defaults for timeouts and
            retries) or a full ``ModelConfig`` (``EvalConfig.effective_embedding``).
        api_base: with a model string: base URL of an OpenAI-compatible embedding server; ignored offline.
        gateway: whose cache, leases, retry policy and ledger the requests go through (default: a
            gateway without a cache).
    """
    name = model if isinstance(model, str) else model.model
    if name == OFFLINE_EMBEDDING:
        from .hashing import HashingEmbedder

        return HashingEmbedder()
    from .litellm_embedder import LiteLLMEmbedder

    if isinstance(model, str):
        return LiteLLMEmbedder(model, api_base=api_base, gateway=gateway)
    return LiteLLMEmbedder(model, gateway=gateway)
