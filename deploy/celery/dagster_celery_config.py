"""Celery settings of the InterviewSim workers; ``dagster_celery.app`` imports this module by name.

Start a worker with this folder on ``PYTHONPATH`` (see docs/CLUSTER.md, the deployment guide)::

    PYTHONPATH=deploy/celery celery -A dagster_celery.app worker -Q dagster --pool solo -n w1@%h

The broker and result backend come from the environment, as for the executor that submits steps
(``interviewsim_dagster.cluster``), so both sides always talk to the same Redis.
"""

import os

broker_url = os.environ["DAGSTER_CELERY_BROKER_URL"]
result_backend = os.environ.get("DAGSTER_CELERY_BACKEND_URL", broker_url)
# One step at a time per worker process: pools, not prefetching, decide what runs where.
worker_prefetch_multiplier = 1
task_acks_late = False
broker_connection_retry_on_startup = True
