"""The one place that builds the gateway and the embedder from configuration.

The direct runner, the Dagster resources and the CLI commands all get their gateway and embedder
here, so a cache path, a transport or an embedding server is chosen the same way whatever
launched the run. Heavy modules (litellm, the SQLite cache) are imported only when asked for.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .embeddings import Embedder
    from .llm.gateway import Gateway
    from .pipeline.config import EvalConfig


def gateway_at(cache_path: Path | str, cache_url: str | None = None) -> Gateway:
    """A gateway whose persistent cache is the shared one at ``cache_url`` (Redis/PostgreSQL), else
    the SQLite file ``cache_path`` (parent folders created); see ``llm.shared_cache.open_cache``."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from .llm.gateway import Gateway
    from .llm.shared_cache import open_cache

    return Gateway(cache=open_cache(cache_url, cache_path))


def make_gateway(config: EvalConfig) -> Gateway:
    """The gateway of a run: the configured cache (``cache_url``, else SQLite at ``cache_path``)."""
    return gateway_at(config.effective_cache_path, config.cache_url)


def embedder_from(model: str, api_base: str | None = None) -> Embedder:
    """The embedder for a model string (``embeddings.embedder_for``): hashing offline, else litellm."""
    from .embeddings import embedder_for

    return embedder_for(model, api_base)


def make_embedder(config: EvalConfig) -> Embedder:
    """The configured embedder: ``effective_embedding_model`` (``offline/hashing`` when unset) and its server."""
    return embedder_from(config.effective_embedding_model, config.effective_embedding_api_base)


def embedding_cache_dir(config: EvalConfig) -> Path:
    """Where retrieval embeddings are cached: ``<data_root>/.cache/embeddings`` (beside ``cache_path``
    when the data root is a URL; ``EvalConfig.embedding_cache_dir``)."""
    return config.embedding_cache_dir
