"""The cluster on loopback: PostgreSQL, Redis, an S3 server and two Celery workers, started here.

Every server is a child process of the test session, listening on 127.0.0.1 only and stopped by its
pid when the session ends, whatever happened (``loopback.running`` / ``Workers.stop``). The Dagster
instance is configured by the repo's own ``deploy/dagster.yaml`` (Postgres from environment
variables), the workers by ``deploy/celery/dagster_celery_config.py``, the evaluation by an
``INTERVIEWSIM_CONFIG`` file, the way docs/CLUSTER.md sets up a real cluster.
"""

from __future__ import annotations

import os
import shutil

import pytest
from cluster_support import BUCKET, METHODS, N_WORKERS, PEOPLE, REPO, SAMPLE, Cluster, Workers

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
    with loopback.running(loopback.PostgresServer(), loopback.RedisServer(), loopback.S3Server()) as started:
        yield started


@pytest.fixture(scope="session")
def cluster(servers, tmp_path_factory) -> Cluster:
    pg, redis_server, s3 = servers
    s3.make_bucket(BUCKET)
    root = tmp_path_factory.mktemp("cluster")
    corpus = root / "corpus"
    for pid in PEOPLE:
        shutil.copytree(SAMPLE / pid, corpus / pid)
    home = root / "dagster_home"
    home.mkdir()
    shutil.copyfile(REPO / "deploy" / "dagster.yaml", home / "dagster.yaml")
    cache_url = f"redis://127.0.0.1:{redis_server.port}/0"
    data_url = f"s3://{BUCKET}/run"
    local_cache = root / "worker_local" / "llm.sqlite"
    config_file = root / "interviewsim.yaml"
    config_file.write_text(
        f"corpus: {corpus}\ndata_root: {data_url}\ncache_url: {cache_url}\ncache_path: {local_cache}\n"
        f"methods: {METHODS}\n", encoding="utf-8")
    env = {
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_HOST": "127.0.0.1", "DAGSTER_PG_PORT": str(pg.port), "DAGSTER_PG_USER": pg.user,
        "DAGSTER_PG_PASSWORD": "unused-trust-auth", "DAGSTER_PG_DB": pg.db,
        "DAGSTER_CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_server.port}/1",
        "DAGSTER_CELERY_BACKEND_URL": f"redis://127.0.0.1:{redis_server.port}/2",
        "INTERVIEWSIM_CONFIG": str(config_file),
        **s3.env(),
    }
    return Cluster(pg, redis_server, s3, home, corpus, config_file, cache_url, data_url, local_cache, env)


@pytest.fixture(scope="session")
def cluster_env(cluster):
    """This process set up like a cluster machine (restored afterwards)."""
    saved = {k: os.environ.get(k) for k in cluster.env}
    os.environ.update(cluster.env)
    yield cluster
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def workers(cluster_env, tmp_path_factory):
    w = Workers(cluster_env, N_WORKERS, tmp_path_factory.mktemp("worker_logs"))
    try:
        yield w.start()
    finally:
        w.stop()
