"""Throwaway servers on 127.0.0.1 for the distributed tests and benchmarks: PostgreSQL, Redis, S3 (moto).

A cluster's moving parts are tested here with the real servers, not fakes: Debian's ``postgresql``
(a fresh cluster from ``initdb`` in a temp folder), Debian's ``redis-server`` and ``moto``'s S3
server. Each server is one child process whose pid we hold; ``stop()`` signals exactly that pid
(never a process name), and the context managers stop it however the block ends. Nothing here
touches the network beyond loopback, and no server outlives its ``with`` block.

``available()`` says which servers can be started on this machine, so a benchmark can skip one
with a message instead of failing.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

__all__ = ["PostgresServer", "RedisServer", "S3Server", "available", "free_port", "postgres_bin"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def postgres_bin() -> Path | None:
    """Debian's newest ``/usr/lib/postgresql/<ver>/bin`` holding ``initdb`` (not on PATH there)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def available() -> dict[str, str | None]:
    """Server name -> None when it can start here, else why not."""
    out: dict[str, str | None] = {}
    out["postgres"] = None if postgres_bin() else "PostgreSQL binaries not found (apt-get install postgresql)"
    out["redis"] = None if shutil.which("redis-server") else "redis-server not found (apt-get install redis-server)"
    try:
        import moto.server  # noqa: F401
        out["s3"] = None
    except ImportError:
        out["s3"] = "moto not installed (pip install 'interviewsim[distributed]')"
    return out


def _wait(ready, proc: subprocess.Popen, what: str, timeout: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with code {proc.returncode} while starting\n{tail}")
        try:
            if ready():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s")


def _stop_pid(proc: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
    """Signal this child (by its pid) and reap it; SIGKILL if it does not exit in time."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.kill(proc.pid, sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


class _Server:
    proc: subprocess.Popen | None = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self):  # pragma: no cover - interface
        raise NotImplementedError

    def stop(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class PostgresServer(_Server):
    """A fresh PostgreSQL cluster: ``initdb`` into a temp folder, the ``postgres`` server on 127.0.0.1.

    PostgreSQL refuses to run as root; when we are root, the cluster folder is handed to the
    ``postgres`` system user (created by the Debian package) and both processes run as that user.
    Trust authentication on loopback only: this is a throwaway test cluster.
    """

    user = "interviewsim"

    def __init__(self, db: str = "interviewsim", *, durable: bool = False, settings: dict[str, str] | None = None):
        """``durable=False`` (tests) turns fsync off; benchmarks use ``True`` to measure what production pays.

        ``settings``: more server settings (``-c name=value``), e.g. ``shared_preload_libraries`` for a
        benchmark that reads ``pg_stat_statements``; the tests' server keeps PostgreSQL's defaults.
        """
        self.db = db
        self.durable = durable
        self.settings = dict(settings or {})
        self.port = free_port()
        self.dir: Path | None = None

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.db}"

    def start(self) -> PostgresServer:
        bindir = postgres_bin()
        if bindir is None:
            raise RuntimeError(available()["postgres"])
        self.dir = Path(tempfile.mkdtemp(prefix="interviewsim-pg-"))
        run_as: dict = {}
        if os.geteuid() == 0:
            import pwd

            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            run_as = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        data, log = self.dir / "data", self.dir / "server.log"
        subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", self.user, "--auth=trust", "-E", "UTF8",
                        "--no-instructions"], check=True, capture_output=True, cwd=self.dir, **run_as)
        with open(log, "wb") as fh:
            if run_as:
                os.chown(log, run_as["user"], run_as["group"])
            self.proc = subprocess.Popen(
                [str(bindir / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p", str(self.port), "-k", str(self.dir),
                 "-c", f"fsync={'on' if self.durable else 'off'}", "-c", "max_connections=200",
                 "-c", "shared_buffers=32MB", *(a for k, v in self.settings.items() for a in ("-c", f"{k}={v}"))],
                stdout=fh, stderr=subprocess.STDOUT, cwd=self.dir, start_new_session=True, **run_as)
        try:
            _wait(self._ready, self.proc, "postgres", 60, log)
            self._createdb()
        except BaseException:
            self.stop()
            raise
        return self

    def _connect(self, db: str):
        import psycopg2

        return psycopg2.connect(host="127.0.0.1", port=self.port, user=self.user, dbname=db, connect_timeout=2)

    def _ready(self) -> bool:
        self._connect("postgres").close()
        return True

    def _createdb(self) -> None:
        conn = self._connect("postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{self.db}"')
        conn.close()

    def stop(self) -> None:
        # SIGINT is PostgreSQL's "fast" shutdown: sessions rolled back, clean exit.
        _stop_pid(self.proc, signal.SIGINT)
        self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


class RedisServer(_Server):
    """``redis-server`` on 127.0.0.1 with an append-only file in a temp folder (a cache must persist)."""

    def __init__(self):
        self.port = free_port()
        self.dir: Path | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError(available()["redis"])
        self.dir = Path(tempfile.mkdtemp(prefix="interviewsim-redis-"))
        log = self.dir / "server.log"
        with open(log, "wb") as fh:
            self.proc = subprocess.Popen(
                [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir), "--save", "",
                 "--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction",
                 "--protected-mode", "yes"],
                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait(self._ready, self.proc, "redis-server", 30, log)
        except BaseException:
            self.stop()
            raise
        return self

    def _ready(self) -> bool:
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        finally:
            client.close()

    def stop(self) -> None:
        _stop_pid(self.proc)
        self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


class S3Server(_Server):
    """moto's S3-compatible server; ``env()`` gives the variables s3fs/boto need to reach it.

    The credentials are moto's dummies (moto accepts any), set only in the children we start.
    """

    region = "us-east-1"

    def __init__(self):
        self.port = free_port()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": self.region}

    def start(self) -> S3Server:
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            _wait(self._ready, self.proc, "moto S3 server", 60)
        except BaseException:
            self.stop()
            raise
        return self

    def _ready(self) -> bool:
        with socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True

    def make_bucket(self, name: str) -> None:
        import boto3

        boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                     region_name=self.region).create_bucket(Bucket=name)

    def stop(self) -> None:
        _stop_pid(self.proc)
        self.proc = None


@contextmanager
def running(*servers: _Server) -> Iterator[tuple[_Server, ...]]:
    """Start every server; stop all of them (by pid) however the block ends."""
    started: list[_Server] = []
    try:
        for s in servers:
            s.start()
            started.append(s)
        yield servers
    finally:
        for s in reversed(started):
            s.stop()
