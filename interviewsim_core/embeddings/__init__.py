"""Text embeddings for retrieval: the ``Embedder`` protocol, the offline embedder, the disk cache.

Used by the retrieval strategies (``strategies/retrieval.py``), the report's train-test overlap
and the premise label clustering; not by the model gateway, which is why this is its own package.
``LiteLLMEmbedder`` (the paper's ``text-embedding-3-small`` and any litellm embedding model) is
imported from ``embeddings.litellm_embedder`` or built by ``embedder_for``, so importing this
package never imports litellm.
"""

from ._protocol import Embedder
from .cache import EmbeddingCache, cached_embed, texts_digest
from .factory import OFFLINE_EMBEDDING, embedder_for
from .hashing import HashingEmbedder

__all__ = [
    "OFFLINE_EMBEDDING", "Embedder", "EmbeddingCache", "HashingEmbedder", "cached_embed", "embedder_for",
    "texts_digest",
]
