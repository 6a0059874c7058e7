"""What every asset shares: resource keys, the backfill policy, pools, partition cells.

Code versions (the mechanism behind "re-score when a judge changes") are core's
``Step.code_version``: the identity of the models a step asks plus the settings that change its rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import dagster as dg

from interviewsim_core.llm.types import ModelConfig

from .defs.corpus.partitions import dims_of

class AssetTarget(NamedTuple):
    """One asset of a stage multi-asset as a check sees it: its key and partitions definition."""

    key: dg.AssetKey
    partitions_def: dg.PartitionsDefinition | None


CONFIG = "eval_config"
CORPUS = "corpus"
LLM = "llm"

SINGLE_RUN = dg.BackfillPolicy.single_run()
"""A backfill over any number of partitions is one run, whose assets batch every partition's calls.

Dagster's per-run start-up (process, code load, event-log writes) is paid once, not per partition
(``benchmarks/bench_orchestration.py`` measures the difference)."""


def provider_of(model: ModelConfig) -> str:
    """``openai/gpt-4.1`` -> ``openai``; a bare model name is litellm's default provider (openai)."""
    head, sep, _ = model.model.partition("/")
    return head if sep else "openai"


def pool_for(models: Iterable[ModelConfig]) -> str:
    """The Dagster pool capping concurrent steps that call these providers (``llm_<provider>``).

    Dagster gives a step exactly one pool, so a step asking judges of several providers uses the
    joint pool named after all of them, sorted (``llm_anthropic_openai``): ``dagster instance
    concurrency set llm_openai N`` does not cap that step, ``... set llm_anthropic_openai N`` does.
    ``dagster.yaml`` gives every pool a default limit and says the same; inside a step the gateway
    still bounds calls in flight per model (``ModelConfig.max_concurrency``).
    """
    return "llm_" + "_".join(sorted({provider_of(m) for m in models}))


def cells(
    context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext, partitions_def: dg.PartitionsDefinition
) -> list[tuple[str, str, str]]:
    """``(partition_key, personality_id, method)`` for every P x M partition of the run, parsed by definition."""
    out = []
    from .run_keys import run_keys

    for key in run_keys(context):
        dims = dims_of(partitions_def, key)
        out.append((str(key), dims["personality"], dims["method"]))
    return out
