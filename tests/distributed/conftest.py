"""The cluster on loopback: PostgreSQL, Redis, an S3 server and two Celery workers, started here.

Every server is a child process of the test session, listening on 127.0.0.1 only and stopped by its
pid when the session ends, whatever happened (``loopback.running`` / ``Workers.stop``). The Dagster
instance is configured by the repo's own ``deploy/dagster.yaml`` (Postgres from environment
variables), the workers by ``deploy/celery/dagster_celery_config.py``, the evaluation by an
``INTERVIEWSIM_CONFIG`` file, the way the README's deployment guide sets up a real cluster.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from interviewsim_core import loopback  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "interviewsim_core" / "sample_corpus"
PEOPLE = ("SYN_AUERLUND", "SYN_KAVANEK", "SYN_THORNQUIST")
METHODS = "simple,chrono-100,memory-10"
BUCKET = "interviewsim-results"
N_WORKERS = 2


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/distributed" in str(item.fspath):
            item.add_marker(pytest.mark.distributed)


@dataclass
class Cluster:
    pg: loopback.PostgresServer
    redis: loopback.RedisServer
    s3: loopback.S3Server
    home: Path
    corpus: Path
    config_file: Path
    cache_url: str
    data_url: str
    local_cache: Path
    env: dict[str, str]


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


class Workers:
    """``celery -A dagster_celery.app worker`` processes, each a child we hold by pid."""

    def __init__(self, cluster: Cluster, n: int, log_dir: Path):
        self.cluster, self.n, self.log_dir = cluster, n, log_dir
        self.procs: list[subprocess.Popen] = []
        self.names = [f"interviewsim-w{i}@loopback" for i in range(1, n + 1)]

    def start(self) -> Workers:
        env = {**os.environ, **self.cluster.env}
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "deploy" / "celery"), str(REPO), env.get("PYTHONPATH", "")])
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        celery = [sys.executable, "-m", "celery"]
        for name in self.names:
            log = open(self.log_dir / f"{name.split('@')[0]}.log", "wb")
            self.procs.append(subprocess.Popen(
                [*celery, "-A", "dagster_celery.app", "worker", "-Q", "dagster", "--pool", "solo",
                 "--prefetch-multiplier", "1", "--without-gossip", "--without-mingle", "-n", name, "-l", "INFO"],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True))
            log.close()
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a celery worker exited ({p.returncode}); see {self.log_dir}")
            if all("ready." in self.log(name) for name in self.names):
                return
            time.sleep(0.5)
        raise TimeoutError(f"celery workers not ready after {timeout} s; see {self.log_dir}")

    def log(self, name: str) -> str:
        path = self.log_dir / f"{name.split('@')[0]}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        self.procs = []


@pytest.fixture(scope="session")
def workers(cluster_env, tmp_path_factory):
    w = Workers(cluster_env, N_WORKERS, tmp_path_factory.mktemp("worker_logs"))
    try:
        yield w.start()
    finally:
        w.stop()
