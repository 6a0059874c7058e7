"""The curation as the first stage of a run: an ``EvalConfig`` naming ``transcripts`` + ``manifest`` curates them
into its ``corpus`` (the graph's curation steps, ``transcript_turns`` to ``prepared_input``: ``curation/step.py``), which the evaluation then reads
(``interviewsim run --transcripts ...``, a UI launch).

Defined here once so the step, ``run`` and ``plan`` agree on the model (the configured ``builder``, with the run's
``api_base``/``concurrency``/``batch``), the cache (the run's model-call cache: a re-run curates for
free and a planned curation counts its cache hits) and the output folder (``corpus``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from ..llm.types import ModelConfig

if TYPE_CHECKING:
    from ..pipeline.config import EvalConfig
    from ..plan import RunPlan

__all__ = ["curates", "curation_model", "plan_curation_of"]


def curates(cfg: EvalConfig) -> bool:
    """True when the configuration asks for a curation before the evaluation."""
    return cfg.transcripts is not None and cfg.manifest is not None


def curation_model(cfg: EvalConfig) -> ModelConfig:
    """The model of the curation's four model steps: the builder (it also builds the evaluation's references)."""
    return cfg.resolve(cfg.builder)


def plan_curation_of(cfg: EvalConfig, personalities: list[str] | None = None,
                     steps: Collection[str] | None = None) -> RunPlan:
    """What the graph's curation of ``personalities`` (default: the manifest's) will call, before any call
    (``curation/plan.py``); ``steps``: only the lines of these curation assets (a run of some of them)."""
    from ..pipeline.steps import STEPS
    from ..plan import RunPlan
    from .plan import plan_curation
    from .run import STEPS as CONTRACT_OF

    planned = plan_curation(cfg.transcripts, cfg.manifest, curation_model(cfg), cfg.effective_cache_path,
                            personalities)
    if steps is None:
        return planned
    contracts = {c for s in STEPS if s.curation and s.name in steps and s.calls_models for c in s.contracts}
    return RunPlan(lines=tuple(line for line in planned.lines if CONTRACT_OF.get(line.step) in contracts))
