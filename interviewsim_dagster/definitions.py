"""The code location: every domain's definitions merged, plus the rules that cover all assets.

How the definitions get their ``EvalConfig``: ``EvalConfig.load_resolved()`` reads the file named
by ``INTERVIEWSIM_CONFIG`` and the ``INTERVIEWSIM_*`` environment variables at import time, because
the method partitions, code versions (judge identities), pools and cron are part of the definitions
themselves; the assets then use that same config (``factory.checked_config``). ``interviewsim run``
builds its own definitions from its flags and saves the config for ``interviewsim ui``, so a
``dagster dev`` started afterwards shows the same graph. Paths are made absolute once
(``EvalConfig.resolved``), so runs launched from the UI and from the CLI write to the same place.

The assets themselves come from core's step table through one factory (``factory.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig, check_retrieval_embedder
from interviewsim_core.pipeline.steps import steps_for

from .assets_support import CONFIG, CORPUS, LLM
from .defs.corpus.sensors import personality_registration
from .defs.cost.plan import build_plan_asset
from .defs.evaluate.checks import build_invalid_rate_check
from .defs.simulate.checks import build_checks as build_generation_checks
from .defs.simulate.checks import build_mcq_checks
from .factory import build_step_assets
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


def build_resources(cfg: EvalConfig) -> dict[str, object]:
    return {
        CONFIG: EvalConfigResource.from_config(cfg),
        CORPUS: CorpusResource(path=str(cfg.corpus)),
        LLM: GatewayResource(cache_path=str(cfg.effective_cache_path), cache_url=cfg.cache_url),
        "io_manager": ParquetIOManager(data_root=str(cfg.data_root)),
    }


def build_definitions(cfg: EvalConfig, executor: dg.ExecutorDefinition | None = None, *,
                      run_methods: Sequence[str] | None = None) -> dg.Definitions:
    """Every asset, check, sensor and resource for one configuration (methods, judges, cron, paths).

    Refuses (ConfigError) a configuration ``check_retrieval_embedder`` refuses for ``run_methods``.
    ``None`` (the UI's code location) checks every configured method, since the UI can launch any of
    them: it fails to load with the message naming the embedder option instead of serving a
    misconfigured retrieval run. ``interviewsim run --methods`` passes the methods it will materialise,
    so a configured retrieval method it does not run cannot stop it.
    """
    check_retrieval_embedder(cfg, run_methods)
    assets = build_step_assets(cfg)
    by_name = {a.key.path[-1]: a for a in assets}
    checks = [
        *build_generation_checks(by_name["generations"], cfg),
        *build_mcq_checks(by_name["mcq_answers"], cfg),
        *(build_invalid_rate_check(by_name[s.name], cfg) for s in steps_for(cfg) if s.calls_models),
    ]
    by_job: dict[str, list[dg.AssetsDefinition]] = {}
    pxm_keys = {a.key for a in assets if isinstance(a.partitions_def, dg.MultiPartitionsDefinition)}
    for a in assets:
        job = (GLOBAL_JOB if a.partitions_def is None else
               PERSONALITY_METHOD_JOB if a.key in pxm_keys else
               PERSONALITY_SUMMARY_JOB if pxm_keys & set(a.dependency_keys) else PERSONALITY_JOB)
        by_job.setdefault(job, []).append(a)
    return dg.Definitions(
        # The plan asset is in no job: `interviewsim run` never materialises it, the UI does on demand.
        assets=[*assets, build_plan_asset(cfg)],
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
        executor=executor or EXECUTOR,  # the cluster location passes the Celery executor
    )


defs = build_definitions(EvalConfig.load_resolved())
