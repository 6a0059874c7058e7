"""What the distributed tests share: the cluster's settings and the Celery worker processes.

A uniquely named module (``conftest`` is ambiguous when several test folders have one); the
fixtures that start the servers are in this folder's ``conftest.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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
