"""The one place that turns an embedding setting (model string, server) into an ``Embedder``.

The pipeline's retrieval, the report's overlap analysis and the premise label clustering all
build their embedder here, so the same setting always means the same vectors.
"""

from __future__ import annotations

from ._protocol import Embedder

__all__ = ["OFFLINE_EMBEDDING", "embedder_for"]

OFFLINE_EMBEDDING = "offline/hashing"
"""Model string of the offline ``HashingEmbedder`` (numpy only, no download, no network)."""


def embedder_for(model: str, api_base: str | None = None) -> Embedder:
    """``HashingEmbedder`` for ``offline/hashing``, else a ``LiteLLMEmbedder`` (litellm imported only then).

    Args:
        model: ``offline/hashing`` or a litellm embedding model, e.g. ``openai/text-embedding-3-small``.
        api_base: base URL of an OpenAI-compatible embedding server; ignored offline.
    """
    if model == OFFLINE_EMBEDDING:
        from .hashing import HashingEmbedder

        return HashingEmbedder()
    from .litellm_embedder import LiteLLMEmbedder

    return LiteLLMEmbedder(model, api_base=api_base)
