"""The one place that builds the gateway and the embedder from configuration.

The direct runner, the Dagster resources and the CLI commands all get their gateway and embedder
here, so a cache path, a transport or an embedding server is chosen the same way whatever
launched the run. Heavy modules (litellm, the SQLite cache) are imported only when asked for.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .embeddings import Embedder
    from .llm.gateway import Gateway
    from .llm.types import ModelConfig
    from .pipeline.config import EvalConfig


def gateway_at(cache_path: Path | str, cache_url: str | None = None) -> Gateway:
    """A gateway whose persistent cache is the shared one at ``cache_url`` (Redis/PostgreSQL), else
    the SQLite file ``cache_path`` (parent folders created); see ``llm.shared_cache.open_cache``."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from .llm.gateway import Gateway
    from .llm.shared_cache import open_cache

    return Gateway(cache=open_cache(cache_url, cache_path))


def process_gateway(cache_path: Path | str, cache_url: str | None = None) -> Gateway:
    """The one gateway of this process for a cache: every asset of a run and its embedder share its
    cache connection, its per-endpoint concurrency bounds and its cost ledger."""
    return _process_gateway(str(Path(cache_path).resolve()), cache_url, os.getpid())


@functools.lru_cache(maxsize=8)
def _process_gateway(cache_path: str, cache_url: str | None, pid: int) -> Gateway:
    return gateway_at(cache_path, cache_url)


def make_gateway(config: EvalConfig) -> Gateway:
    """The gateway of a run: the configured cache (``cache_url``, else SQLite at ``cache_path``)."""
    return gateway_at(config.effective_cache_path, config.cache_url)


def embedder_from(model: str | ModelConfig, api_base: str | None = None, gateway: Gateway | None = None) -> Embedder:
    """The embedder for a model (``embeddings.embedder_for``): hashing offline, else litellm through ``gateway``."""
    from .embeddings import embedder_for

    return embedder_for(model, api_base, gateway=gateway)


def make_embedder(config: EvalConfig, gateway: Gateway | None = None) -> Embedder:
    """The configured embedder: ``effective_embedding`` (``offline/hashing`` when unset) through ``gateway``,
    by default this process's gateway on the run's cache (``process_gateway``), so embedding requests
    share the chat calls' cache, leases, retry policy, redaction and ledger."""
    model = config.effective_embedding
    from .embeddings import OFFLINE_EMBEDDING

    if model.model == OFFLINE_EMBEDDING:
        return embedder_from(model)
    if gateway is not None:
        return embedder_from(model, gateway=gateway)
    return _process_embedder(model.model_dump_json(), str(config.effective_cache_path), config.cache_url, os.getpid())


@functools.lru_cache(maxsize=8)
def _process_embedder(model_json: str, cache_path: str, cache_url: str | None, pid: int) -> Embedder:
    from .llm.types import ModelConfig

    return embedder_from(ModelConfig.model_validate_json(model_json), gateway=process_gateway(cache_path, cache_url))


def with_run_policy(embedder: Embedder, config: EvalConfig) -> Embedder:
    """``embedder`` as the run ``config`` calls it.

    An embedder built from the model string and server alone (the Dagster step env's
    ``resources.configured_embedder``) knows neither the configured timeout/retry policy nor the
    run's cache: for the configured remote model it is replaced by ``make_embedder(config)``.
    Any other embedder (offline, a test's own) is returned as it is.
    """
    from .embeddings.litellm_embedder import LiteLLMEmbedder

    if isinstance(embedder, LiteLLMEmbedder) and embedder.model == config.effective_embedding_model:
        return make_embedder(config)
    return embedder


def embedding_cache_dir(config: EvalConfig) -> Path:
    """Where retrieval embeddings are cached: ``<data_root>/.cache/embeddings`` (beside ``cache_path``
    when the data root is a URL; ``EvalConfig.embedding_cache_dir``)."""
    return config.embedding_cache_dir
