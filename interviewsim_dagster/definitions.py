"""The code location: every domain's definitions merged, plus the rules that cover all assets.

How the definitions get their ``EvalConfig``: ``EvalConfig.load_resolved()`` reads the file named
by ``INTERVIEWSIM_CONFIG`` and the ``INTERVIEWSIM_*`` environment variables at import time, because
the method partitions, code versions (judge identities), pools and cron are part of the definitions
themselves; the assets then use that same config (``factory.checked_config``). ``interviewsim ui``
points ``INTERVIEWSIM_CONFIG`` at one named file (``pipeline/config_files.py``); ``interviewsim run``
builds its own definitions from its flags and records its config, and when that differs from the
UI's, the automation sensor's description says so (the UI keeps running its own). Paths are made absolute once
(``EvalConfig.resolved``), so runs launched from the UI and from the CLI write to the same place.

The assets themselves come from core's step table through one factory (``factory.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig, check_retrieval_embedder
from interviewsim_core.pipeline.config_files import last_run_note
from interviewsim_core.pipeline.data_root_claims import config_identity
from interviewsim_core.pipeline.steps import steps_for
from interviewsim_core.pipeline.study import mismatch, study_of

from .assets_support import CONFIG, CORPUS, LLM
from .defs.corpus.sensors import personality_registration
from .defs.corpus.sources import personality_sources
from .defs.cost.plan import build_plan_asset
from .defs.evaluate.automation import AUTOMATION_SENSOR
from .defs.evaluate.checks import build_invalid_rate_check
from .defs.simulate.checks import build_checks as build_generation_checks
from .defs.simulate.checks import build_mcq_checks
from .assets_support import AssetTarget
from .factory import build_step_assets, stages
from .io_managers import ParquetIOManager
from .launch import JOB_DESCRIPTIONS
from .resources import CorpusResource, EvalConfigResource, GatewayResource

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
        "io_manager": ParquetIOManager(data_root=str(cfg.data_root), config_id=config_identity(cfg),
                                       study=study_of(cfg).model_dump_json()),
    }


def build_definitions(cfg: EvalConfig, executor: dg.ExecutorDefinition | None = None, *,
                      run_methods: Sequence[str] | None = None, pools: bool = True) -> dg.Definitions:
    """Every asset, check, sensor and resource for one configuration (methods, judges, cron, paths).

    Refuses (ConfigError) a configuration ``check_retrieval_embedder`` refuses for ``run_methods``.
    ``None`` (the UI's code location) checks every configured method, since the UI can launch any of
    them: it fails to load with the message naming the embedder option instead of serving a
    misconfigured retrieval run. ``interviewsim run --methods`` passes the methods it will materialise,
    so a configured retrieval method it does not run cannot stop it.
    """
    check_retrieval_embedder(cfg, run_methods)
    note = last_run_note(cfg)  # a CLI run with another config: said on the Automation page, not applied
    # A configuration the data root's study refuses (other than a judge change, which the automation re-scores)
    # would have every run the sensor launches refused: the sensor then targets nothing and says why.
    refused = mismatch(cfg.data_root, study_of(cfg), rescore=True)
    assets = build_step_assets(cfg, pools=pools)
    targets = {k.path[-1]: AssetTarget(k, a.specs_by_key[k].partitions_def) for a in assets for k in a.keys}
    checks = [
        *build_generation_checks(targets["generations"], cfg),
        *build_mcq_checks(targets["mcq_answers"], cfg),
        # The curation's table holds transcripts, not call rows: its failed calls are its refusals (``refused``).
        *(build_invalid_rate_check(targets[s.name], cfg) for s in steps_for(cfg) if s.calls_models and not s.curation),
    ]
    jobs = [dg.define_asset_job(st.job, selection=dg.AssetSelection.assets(*[s.name for s in st.steps]),
                                description=JOB_DESCRIPTIONS[st.job])
            for st in stages(cfg)]
    return dg.Definitions(
        # The plan asset is in no job: `interviewsim run` never materialises it, the UI does on demand.
        assets=[personality_sources, *assets, build_plan_asset(cfg)],
        asset_checks=checks,
        jobs=jobs,
        sensors=[
            personality_registration,
            dg.AutomationConditionSensorDefinition(
                AUTOMATION_SENSOR,
                target=dg.AssetSelection.all() if refused is None else dg.AssetSelection.assets(),
                default_status=dg.DefaultSensorStatus.RUNNING,
                minimum_interval_seconds=cfg.automation_interval_s,
                description="Evaluates every asset's automation condition: new personalities, judge changes. "
                "A run of a configuration other than the data root's study (study.json) is refused, except the "
                "re-score this sensor launches after a judge change. While a run of another configuration (an "
                "`interviewsim run` with other settings) writes the data root, the runs this sensor launches refuse "
                "to start, naming that run on their run page."
                + (f" NOTE: {note}" if note else "")
                + (f" NOT EVALUATING ANY ASSET: {refused}" if refused else ""),
            ),
        ],
        resources=build_resources(cfg),
        metadata={"last_cli_run_config": note} if note else None,
        executor=executor or EXECUTOR,  # the cluster location passes the Celery executor
    )


defs = build_definitions(EvalConfig.load_resolved())
