"""The three resources every asset draws on: the run's EvalConfig, the corpus, and the model gateway.

Declared once and built from one ``EvalConfig`` (see ``definitions.py``), so a run launched from the
UI and one launched by ``interviewsim run`` with the same settings do the same work. API keys never
pass through here: each ``ModelConfig`` names the environment variable holding its key
(``api_key_env``) and the gateway reads it at call time, so no key reaches run config, metadata or
the Dagster event log.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import PrivateAttr

from interviewsim_core.pipeline.config import EvalConfig

from .registration import scan_corpus

if TYPE_CHECKING:
    from interviewsim_core.embeddings import Embedder
    from interviewsim_core.pipeline.steps import StepEnv
    from interviewsim_core.schema import PreparedInput
    from interviewsim_core.split import HeldOutSplit


class EvalConfigResource(dg.ConfigurableResource):
    """The evaluation settings as JSON, so the launchpad shows what a run uses.

    Not a per-run knob: the definitions (partitions, code versions, pools) are built from the same
    config at load time, and every asset refuses a run whose copy here was edited
    (``factory.checked_config``). Change the config file / environment and reload instead.
    """

    config_json: str
    """``EvalConfig.model_dump_json()``; paths absolute so a run does not depend on its working directory."""

    @classmethod
    def from_config(cls, cfg: EvalConfig) -> EvalConfigResource:
        return cls(config_json=cfg.model_dump_json())

    def get(self) -> EvalConfig:
        return _parse_config(self.config_json)


@functools.lru_cache(maxsize=8)
def _parse_config(text: str) -> EvalConfig:
    return EvalConfig.model_validate_json(text)


class CorpusResource(dg.ConfigurableResource):
    """The prepared corpus folder: validated documents and their chronological splits, by personality_id."""

    path: str

    def scan(self):
        """Valid personalities and the problems of invalid files (see ``registration.scan_corpus``)."""
        return scan_corpus(self.path)

    def document(self, personality_id: str) -> PreparedInput:
        return _documents(self.path, _corpus_fingerprint(self.path))[personality_id]

    def split(self, personality_id: str) -> HeldOutSplit:
        """The held-out split of one personality; cached per process, as every asset of a run needs it."""
        return _split(self.path, _corpus_fingerprint(self.path), personality_id)


def _corpus_fingerprint(path: str) -> str:
    """Changes whenever a document changes, so a long-lived process never serves a stale split."""
    p = Path(path)
    files = [p] if p.is_file() else sorted(p.glob("*/prepared_input.json")) + sorted(p.glob("prepared_input.json"))
    parts = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        parts.append(f"{f}:{st.st_mtime_ns}:{st.st_size}")
    return "|".join(parts)


@functools.lru_cache(maxsize=4)
def _documents(path: str, fingerprint: str) -> dict[str, PreparedInput]:
    from interviewsim_core.loader import load_document

    scan = scan_corpus(path)
    return {pid: load_document(file) for pid, file in scan.valid.items()}


@functools.lru_cache(maxsize=256)
def _split(path: str, fingerprint: str, personality_id: str) -> HeldOutSplit:
    from interviewsim_core.split import split_personality

    docs = _documents(path, fingerprint)
    if personality_id not in docs:
        raise KeyError(
            f"personality {personality_id!r} is a registered partition but has no valid document in {path}; "
            "fix or restore its prepared_input.json (the sensor log lists invalid files)"
        )
    return split_personality(docs[personality_id])


class GatewayResource(dg.ConfigurableResource):
    """The one model gateway of this process: LLM cache, bounded concurrency, retries, cost ledger.

    One gateway per process so every asset of a run shares the cache connection and the per-model
    concurrency limits; the cache file is shared across processes and runs (it is multi-process safe),
    which is what makes a re-score re-ask only the changed judge.
    """

    cache_path: str
    """SQLite cache file (``EvalConfig.effective_cache_path``)."""
    cache_url: str | None = None
    """Shared cache for all workers (``EvalConfig.cache_url``: redis:// or postgresql://, no password); wins over cache_path."""

    _gateway: object = PrivateAttr(default=None)

    def get(self):
        if self._gateway is None:
            self._gateway = _gateway_for(str(Path(self.cache_path).resolve()), self.cache_url, os.getpid())
        return self._gateway


def _gateway_for(cache_path: str, cache_url: str | None, pid: int):
    # The process gateway of factories: the embedder of a run (``make_embedder``) uses the same one.
    from interviewsim_core.factories import process_gateway

    return process_gateway(cache_path, cache_url)


def step_env(cfg: EvalConfig, split) -> StepEnv:
    """The steps' environment of a run (or of the action's worker): ``split`` loads a personality's
    split; the embedder and its cache are the configured ones."""
    from interviewsim_core.pipeline.steps import StepEnv

    return StepEnv(cfg, split,
                   embedder=lambda: configured_embedder(cfg.effective_embedding_model, cfg.effective_embedding_api_base),
                   embedding_cache=embedding_cache(cfg))


@functools.lru_cache(maxsize=4)
def configured_embedder(model: str, api_base: str | None) -> Embedder:
    """One embedder per process and model: litellm embedders keep a client worth reusing."""
    from interviewsim_core.factories import embedder_from

    return embedder_from(model, api_base)


def embedding_cache(cfg: EvalConfig):
    """The retrieval embedding cache of ``cfg``'s data root, one object per process and folder."""
    from interviewsim_core.factories import embedding_cache_dir

    return _embedding_cache(str(embedding_cache_dir(cfg)))


@functools.lru_cache(maxsize=4)
def _embedding_cache(directory: str):
    from interviewsim_core.embeddings import EmbeddingCache

    return EmbeddingCache(directory)
