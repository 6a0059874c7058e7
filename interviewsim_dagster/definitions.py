"""The code location: every domain's definitions merged, plus the rules that cover all assets.

How the definitions get their ``EvalConfig``: ``load_config()`` calls ``EvalConfig.load`` on the
file named by ``INTERVIEWSIM_CONFIG`` and the ``INTERVIEWSIM_*`` environment variables, at import
time, because the method partitions, code versions (judge identities), pools and cron are part of
the definitions themselves. ``interviewsim run`` therefore sets those variables (from its flags)
before building definitions, and a ``dagster dev`` started in the same environment shows the same
graph. Relative paths are resolved against the working directory once, here, so runs launched from
the UI and from the CLI write to the same place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig

from .assets_support import CONFIG, CORPUS, LLM
from .defs.corpus import assets as corpus_assets
from .defs.corpus.sensors import personality_registration
from .defs.evaluate import assets as evaluate_assets
from .defs.evaluate.checks import build_invalid_rate_check
from .defs.premise import assets as premise_assets
from .defs.references import assets as reference_assets
from .defs.report import build_assets as build_report_assets
from .defs.simulate import assets as simulate_assets
from .defs.simulate.checks import build_checks as build_generation_checks
from .defs.simulate.checks import build_mcq_checks
from .io_managers import ParquetIOManager
from .launch import GLOBAL_JOB, PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB, build_jobs
from .resources import CorpusResource, EvalConfigResource, GatewayResource

AUTOMATION_SENSOR = "interviewsim_automation"

EXECUTOR = dg.in_process_executor
"""Every step of a run in the run's own process. Dagster's default (multiprocess) starts a Python per
step, and each imports dagster, pandas and litellm again: 40-58 s per UI run on two cores for work
the CLI's in-process runs do in 2-3 s. Steps of one run share the machine's cores through the
gateway's async batches anyway; parallelism across runs comes from the run queue
(``max_concurrent_runs``) and the pools. ``benchmarks/bench_ui.py`` measures UI runs against the CLI."""

MODEL_CALLING = (
    "fact_summary", "atomic_items", "mcq_items", "reference_personality", "generations", "content_similarity",
    "factual_consistency", "generated_personality", "mcq_answers", "premise_verdicts",
)
"""Assets whose rows come from model calls, hence carry the invalid-output-rate check."""


def load_config(env: Mapping[str, str] | None = None, overrides: Mapping[str, object] | None = None) -> EvalConfig:
    """The EvalConfig of this process (config file + ``INTERVIEWSIM_*``), with absolute paths."""
    cfg = EvalConfig.load(env=os.environ if env is None else env, overrides=overrides)
    updates = {
        "corpus": Path(cfg.corpus).expanduser().resolve(),
        "data_root": Path(cfg.data_root).expanduser().resolve(),
        "cache_path": cfg.effective_cache_path.expanduser().resolve(),
    }
    if cfg.premise_conclusions is not None:
        updates["premise_conclusions"] = Path(cfg.premise_conclusions).expanduser().resolve()
    if cfg.categories_csv is not None:
        updates["categories_csv"] = Path(cfg.categories_csv).expanduser().resolve()
    return cfg.model_copy(update=updates)


def build_resources(cfg: EvalConfig) -> dict[str, object]:
    return {
        CONFIG: EvalConfigResource.from_config(cfg),
        CORPUS: CorpusResource(path=str(cfg.corpus)),
        LLM: GatewayResource(cache_path=str(cfg.effective_cache_path)),
        "io_manager": ParquetIOManager(data_root=str(cfg.data_root)),
    }


def build_definitions(cfg: EvalConfig) -> dg.Definitions:
    """Every asset, check, sensor and resource for one configuration (methods, judges, cron, paths)."""
    assets = [
        *corpus_assets.build_assets(),
        *reference_assets.build_assets(cfg),
        *simulate_assets.build_assets(cfg),
        *evaluate_assets.build_assets(cfg),
        *premise_assets.build_assets(cfg),
        *build_report_assets(cfg),
    ]
    by_name = {a.key.path[-1]: a for a in assets}
    checks = [
        *build_generation_checks(by_name["generations"]),
        *build_mcq_checks(by_name["mcq_answers"]),
        *(build_invalid_rate_check(by_name[n]) for n in MODEL_CALLING),
    ]
    by_job: dict[str, list[dg.AssetsDefinition]] = {}
    pxm_keys = {a.key for a in assets if isinstance(a.partitions_def, dg.MultiPartitionsDefinition)}
    for a in assets:
        job = (GLOBAL_JOB if a.partitions_def is None else
               PERSONALITY_METHOD_JOB if a.key in pxm_keys else
               PERSONALITY_SUMMARY_JOB if pxm_keys & set(a.dependency_keys) else PERSONALITY_JOB)
        by_job.setdefault(job, []).append(a)
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        jobs=build_jobs(by_job),
        sensors=[
            personality_registration,
            dg.AutomationConditionSensorDefinition(
                AUTOMATION_SENSOR,
                target=dg.AssetSelection.all(),
                default_status=dg.DefaultSensorStatus.RUNNING,
                minimum_interval_seconds=cfg.automation_interval_s,
                description="Evaluates every asset's automation condition: new personalities, judge changes.",
            ),
        ],
        resources=build_resources(cfg),
        executor=EXECUTOR,
    )


defs = build_definitions(load_config())
