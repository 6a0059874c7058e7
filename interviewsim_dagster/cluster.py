"""The same definitions, with every step executed by Celery workers: the cluster code location.

Nothing about the graph changes on a cluster; only where steps run and where state lives:

- steps go to ``dagster-celery`` workers through a broker (Redis here), so one run's steps spread
  over as many machines as run workers (``celery_executor``; broker and result backend from
  ``DAGSTER_CELERY_BROKER_URL`` / ``DAGSTER_CELERY_BACKEND_URL``, read from the environment at run
  time so they never sit in a run's stored config);
- run, event-log and schedule storage, and the pool slots, are the instance's: PostgreSQL
  (``deploy/dagster.yaml``), which every worker reaches through the run's instance reference;
- model calls go through the shared cache (``EvalConfig.cache_url``), and Parquet to a data root
  every worker can reach (``EvalConfig.data_root`` as an ``s3://``/``gs://`` URL or a shared mount).

Pools hold across workers and runs because slots live in the instance database: the Celery
executor claims a slot of the step's pool (``llm_<provider>``) before it submits the step, and
releases it when the step ends, whichever worker ran it.

Workers import this module to rebuild a job (``reconstructable``), so they need the same
``INTERVIEWSIM_*`` configuration (config file or variables) as the process launching runs.
"""

from __future__ import annotations

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig

from .definitions import build_definitions
from .launch import GLOBAL_JOB, PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB

BROKER_ENV = "DAGSTER_CELERY_BROKER_URL"
BACKEND_ENV = "DAGSTER_CELERY_BACKEND_URL"


def celery_executor_def() -> dg.ExecutorDefinition:
    """``dagster-celery``'s executor, its broker and result backend taken from the environment."""
    from dagster_celery import celery_executor

    return celery_executor.configured(
        {"broker": {"env": BROKER_ENV}, "backend": {"env": BACKEND_ENV}},
        name="celery_executor",
    )


def build_cluster_definitions(cfg) -> dg.Definitions:
    """``build_definitions(cfg)`` with the Celery executor as every job's default (instead of in-process)."""
    return build_definitions(cfg, executor=celery_executor_def())


defs = build_cluster_definitions(EvalConfig.load_resolved())


# Module-level job factories, so ``dagster.reconstructable`` can point workers (and ``execute_job``)
# at each asset job of these definitions by name.
def personality_assets() -> dg.JobDefinition:
    return defs.resolve_job_def(PERSONALITY_JOB)


def personality_method_assets() -> dg.JobDefinition:
    return defs.resolve_job_def(PERSONALITY_METHOD_JOB)


def personality_summary_assets() -> dg.JobDefinition:
    return defs.resolve_job_def(PERSONALITY_SUMMARY_JOB)


def global_assets() -> dg.JobDefinition:
    return defs.resolve_job_def(GLOBAL_JOB)


JOB_FACTORIES = {
    PERSONALITY_JOB: personality_assets,
    PERSONALITY_METHOD_JOB: personality_method_assets,
    PERSONALITY_SUMMARY_JOB: personality_summary_assets,
    GLOBAL_JOB: global_assets,
}
"""Job name -> module-level factory; ``dg.reconstructable(JOB_FACTORIES[name])`` gives a job workers can rebuild."""
