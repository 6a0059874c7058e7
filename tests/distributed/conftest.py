"""The cluster on loopback: PostgreSQL, Redis, an S3 server and two Celery workers, started here.

Every server is a child process of the test session, listening on 127.0.0.1 only and stopped by its
pid when the session ends, whatever happened (``loopback.running`` / ``Workers.stop``). The Dagster
instance is configured by the repo's own ``deploy/dagster.yaml`` (Postgres from environment
variables), the workers by ``deploy/celery/dagster_celery_config.py``, the evaluation by an
``INTERVIEWSIM_CONFIG`` file, the way docs/CLUSTER.md sets up a real cluster.
"""

from __future__ import annotations

import shutil

import cluster_support
import pytest
from cluster_support import N_WORKERS, PEOPLE, SAMPLE, Cluster, Workers

from interviewsim_core import loopback


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/distributed" in str(item.fspath):
            item.add_marker(pytest.mark.distributed)


def _need(what: str) -> None:
    reason = loopback.available().get(what)
    if reason:
        pytest.fail(f"make test-distributed installs its servers; {what} is missing: {reason}")


@pytest.fixture(scope="session")
def servers():
    for what in ("postgres", "redis", "s3"):
        _need(what)
    with cluster_support.servers() as started:
        yield started


@pytest.fixture(scope="session")
def cluster(servers, tmp_path_factory) -> Cluster:
    root = tmp_path_factory.mktemp("cluster")
    corpus = root / "corpus"
    for pid in PEOPLE:
        shutil.copytree(SAMPLE / pid, corpus / pid)
    return cluster_support.build_cluster(servers, root, corpus)


@pytest.fixture(scope="session")
def cluster_env(cluster):
    """This process set up like a cluster machine (restored afterwards)."""
    with cluster_support.environment(cluster.env):
        yield cluster


@pytest.fixture(scope="session")
def workers(cluster_env, tmp_path_factory):
    w = Workers(cluster_env, N_WORKERS, tmp_path_factory.mktemp("worker_logs"))
    try:
        yield w.start()
    finally:
        w.stop()
