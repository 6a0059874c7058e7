"""What the distributed tests and ``benchmarks/bench_cluster.py`` share: the cluster's servers, settings and workers.

A uniquely named module (``conftest`` is ambiguous when several test folders have one); the
fixtures in this folder's ``conftest.py`` and the benchmark both build their cluster here, so the
benchmark measures the cluster the tests check.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from interviewsim_core import loopback  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "interviewsim_core" / "sample_corpus"
PEOPLE = ("SYN_AUERLUND", "SYN_KAVANEK", "SYN_THORNQUIST")
METHODS = "simple,chrono-100,memory-10"
BUCKET = "interviewsim-results"
N_WORKERS = 2


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


def servers(*, durable: bool = False, pg_settings: dict[str, str] | None = None):
    """PostgreSQL, Redis and the S3 server on loopback, each stopped by its pid however the block ends.

    ``durable``/``pg_settings`` go to ``loopback.PostgresServer`` (the tests keep fsync off; a benchmark
    measuring what the event log costs turns it on and loads ``pg_stat_statements``).
    """
    return loopback.running(loopback.PostgresServer(durable=durable, settings=pg_settings), loopback.RedisServer(),
                            loopback.S3Server())


def build_cluster(started: tuple, root: Path, corpus: Path, methods: str = METHODS) -> Cluster:
    """The cluster machines' setup under ``root`` for the corpus folder ``corpus``, as docs/CLUSTER.md has it.

    The bucket on the S3 server, ``DAGSTER_HOME`` holding the repo's own ``deploy/dagster.yaml``
    (instance in PostgreSQL), an ``INTERVIEWSIM_CONFIG`` file (Redis cache, Parquet on S3), and the
    environment every machine shares (workers and the process launching runs).
    """
    pg, redis_server, s3 = started
    s3.make_bucket(BUCKET)
    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copyfile(REPO / "deploy" / "dagster.yaml", home / "dagster.yaml")
    cache_url = f"redis://127.0.0.1:{redis_server.port}/0"
    data_url = f"s3://{BUCKET}/run"
    local_cache = root / "worker_local" / "llm.sqlite"
    config_file = root / "interviewsim.yaml"
    config_file.write_text(
        f"corpus: {corpus}\ndata_root: {data_url}\ncache_url: {cache_url}\ncache_path: {local_cache}\n"
        f"methods: {methods}\n", encoding="utf-8")
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


@contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    """This process set up like a cluster machine for the block (the variables restored afterwards)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
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
        """SIGTERM each worker by its pid (SIGKILL after 30 s)."""
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
