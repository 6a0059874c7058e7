"""What every asset decorator shares: resource keys, the backfill policy, pools and code versions.

Code versions are the mechanism behind "re-score when a judge changes": a model-calling asset's
version is the identity of the models it asks (output-affecting config + prompt-contract and parser
versions, ``EvalConfig``'s ``judge_identity``) plus any setting that changes its rows. Change a
judge and exactly the judgment assets change version; their downstream shows as stale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

import dagster as dg

from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import judge_identity

from .defs.corpus.partitions import dims_of

CONFIG = "eval_config"
CORPUS = "corpus"
LLM = "llm"

SINGLE_RUN = dg.BackfillPolicy.single_run()
"""A backfill over any number of partitions is one run, whose assets batch every partition's calls.

Dagster's per-run start-up (process, code load, event-log writes) is paid once, not per partition
(``benchmarks/bench_orchestration.py`` measures the difference)."""


def model_version(models: Iterable[ModelConfig], contracts: Sequence[str], **settings: object) -> str:
    """Code version of an asset that asks ``models`` under ``contracts``; ``settings`` that change rows join it."""
    blob = json.dumps(
        {"models": sorted(judge_identity(m, tuple(contracts)) for m in models), "settings": settings},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


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


def personality_keys(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[str]:
    """Every personality partition this run covers (one, or a single-run backfill's range)."""
    return [str(k) for k in context.partition_keys]


def cells(
    context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext, partitions_def: dg.PartitionsDefinition
) -> list[tuple[str, str, str]]:
    """``(partition_key, personality_id, method)`` for every P x M partition of the run, parsed by definition."""
    out = []
    for key in context.partition_keys:
        dims = dims_of(partitions_def, key)
        out.append((str(key), dims["personality"], dims["method"]))
    return out


def frame_for(frames: Mapping[str, object], key: str, asset: str):
    """The upstream partition a downstream partition needs; missing means the upstream run is incomplete."""
    try:
        return frames[str(key)]
    except KeyError:
        raise KeyError(f"{asset}: partition {key!r} is not materialised; materialise it first") from None
