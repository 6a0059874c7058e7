"""The curation as the first stage of a run: an ``EvalConfig`` naming ``transcripts`` + ``manifest`` curates them
into its ``corpus`` (the graph's curation steps, ``transcript_turns`` to ``prepared_input``: ``curation/step.py``), which the evaluation then reads
(``interviewsim run --transcripts ...``, a UI launch).

Defined here once so the step, ``run`` and ``plan`` agree on the model (the configured ``builder``, with the run's
``api_base``/``concurrency``/``batch``), the cache (the run's model-call cache: a re-run curates for
free and a planned curation counts its cache hits) and the output folder (``corpus``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..llm.types import ModelConfig

if TYPE_CHECKING:
    from ..pipeline.config import EvalConfig

__all__ = ["curates", "curation_model"]


def curates(cfg: EvalConfig) -> bool:
    """True when the configuration asks for a curation before the evaluation."""
    return cfg.transcripts is not None and cfg.manifest is not None


def curation_model(cfg: EvalConfig) -> ModelConfig:
    """The model of the curation's four model steps: the builder (it also builds the evaluation's references)."""
    return cfg.resolve(cfg.builder)
