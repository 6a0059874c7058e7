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

from .registration import ScanResult, file_fingerprint, scan_corpus

if TYPE_CHECKING:
    from interviewsim_core.embeddings import Embedder
    from interviewsim_core.pipeline.steps import StepEnv
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

    def split(self, personality_id: str) -> HeldOutSplit:
        """The held-out split of one personality; cached per process, as every asset of a run needs it."""
        file, fingerprint = _document_file(self.path, personality_id)
        return _split(file, fingerprint)


_SCANS: dict[str, ScanResult] = {}
"""Corpus folder -> this process's last scan of it: each valid document and its fingerprint when scanned."""


def _document_file(corpus: str, personality_id: str) -> tuple[str, str]:
    """The personality's valid document and its fingerprint, never stale: the file's own ``stat`` when it is
    unchanged since the last scan, a scan of the corpus (``scan_corpus``, which re-validates only the files that
    changed) when it changed or the id is unknown.

    Why one file's ``stat`` and not the corpus's: a check asks for the split of every partition it checks, and a
    fingerprint of the whole folder on every ask cost a glob and a ``stat`` per personality each time, so the
    recording of a 1,000-personality run spent most of its time there (issue 43).

    Raises:
        KeyError: the personality has no valid document in the corpus now.
    """
    scan = _SCANS.get(corpus)
    file = scan.valid.get(personality_id) if scan is not None else None
    if file is None or file_fingerprint(Path(file)) != scan.states[file].fingerprint:
        scan = _SCANS[corpus] = scan_corpus(corpus)
        file = scan.valid.get(personality_id)
        if file is None:
            raise KeyError(
                f"personality {personality_id!r} is a registered partition but has no valid document in {corpus}; "
                "fix or restore its prepared_input.json (the sensor log lists invalid files)"
            )
    return file, scan.states[file].fingerprint


@functools.lru_cache(maxsize=256)
def _split(file: str, fingerprint: str) -> HeldOutSplit:
    """``fingerprint`` is in the key so an edited file is split again; the document was validated by the scan."""
    from interviewsim_core.loader import load_document
    from interviewsim_core.split import split_personality

    return split_personality(load_document(file))


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
