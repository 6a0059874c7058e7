"""Never pay twice: identical requests in one batch are sent once, and two processes on one cache
wait for each other's in-flight keys instead of asking the provider again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from scripted_model import scripted_reply, toy_request

from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.types import ModelConfig

REPO = Path(__file__).resolve().parents[2]


def _model(server, **kw) -> ModelConfig:
    return ModelConfig(model="openai/m", api_base=server.base_url, timeout_s=30, max_retries=2, **kw)


@pytest.mark.parametrize("with_cache", [False, True])
@pytest.mark.server(reply=scripted_reply, latency_s=0.05)
def test_identical_requests_in_one_batch_are_sent_once(fake_server, tmp_path, with_cache):
    gw = Gateway(cache=SqliteCache(tmp_path / "c.sqlite") if with_cache else None)
    requests = [toy_request("same question")] * 16 + [toy_request("other 1"), toy_request("other 2")]
    out = gw.run(_model(fake_server), requests)
    assert [r.status for r in out] == ["ok"] * 18
    assert fake_server.requests == 3
    assert len({r.raw for r in out[:16]}) == 1 and sum(r.calls_made for r in out) == 3
    assert gw.stats.deduplicated == 15 and gw.stats.calls_made == 3


_RUN = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[4])
    from scripted_model import toy_request
    from interviewsim_core.llm.cache import SqliteCache
    from interviewsim_core.llm.gateway import Gateway
    from interviewsim_core.llm.types import ModelConfig
    cache_path, base, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
    gw = Gateway(cache=SqliteCache(cache_path))
    model = ModelConfig(model="openai/m", api_base=base, timeout_s=30, max_concurrency=8)
    time.sleep(max(0.0, start - time.time()))
    out = gw.run(model, [toy_request(f"q{i}") for i in range(24)])
    print(sorted({r.status for r in out}), gw.stats.calls_made, gw.stats.lease_waits)
""")


@pytest.mark.server(reply=scripted_reply, latency_s=0.3)
def test_two_runs_at_once_on_one_cache_pay_once(fake_server, tmp_path):
    cache = tmp_path / "shared.sqlite"
    SqliteCache(cache).close()
    start = time.time() + 3.0  # both processes imported and ready: they start together
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [subprocess.Popen([sys.executable, "-c", _RUN, str(cache), fake_server.base_url, str(start),
                               str(Path(__file__).parent)], env=env, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    lines = [o[0].split("] ") for o in outs]
    assert all(line[0] == "['ok'" for line in lines), outs
    calls = [int(line[1].split()[0]) for line in lines]
    waits = [int(line[1].split()[1]) for line in lines]
    assert fake_server.requests == 24 and sum(calls) == 24, (calls, waits)
    assert sum(waits) > 0  # the runs did overlap


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def test_leases_live_owner_waits_dead_or_expired_owner_is_taken_over(tmp_path):
    path = tmp_path / "c.sqlite"
    mine, other = SqliteCache(path), SqliteCache(path)
    assert other.lease("k", ttl_s=60)
    assert not mine.lease("k", ttl_s=60)  # a live owner (this process, another cache object)
    assert other.lease("k", ttl_s=60)  # the owner itself may renew
    other.release("k")
    assert mine.lease("k", ttl_s=60)
    mine.release("k")
    import sqlite3

    from interviewsim_core.processes import HOST as _HOST

    with sqlite3.connect(path) as conn:
        conn.execute("INSERT OR REPLACE INTO leases VALUES ('dead', 'ghost', ?, ?, ?)", (_HOST, _dead_pid(), time.time() + 3600))
        conn.execute("INSERT OR REPLACE INTO leases VALUES ('old', 'ghost', ?, ?, ?)", (_HOST, os.getppid(), time.time() - 1))
        conn.execute("INSERT OR REPLACE INTO leases VALUES ('live', 'ghost', ?, ?, ?)", (_HOST, os.getppid(), time.time() + 3600))
    assert mine.lease("dead", ttl_s=60) and mine.lease("old", ttl_s=60)
    assert not mine.lease("live", ttl_s=60)


@pytest.mark.server(reply=scripted_reply)
def test_stale_lease_of_a_dead_process_does_not_block_a_call(fake_server, tmp_path):
    import sqlite3

    from interviewsim_core.llm.cache import cache_key
    from interviewsim_core.processes import HOST as _HOST

    path = tmp_path / "c.sqlite"
    SqliteCache(path).close()
    model, req = _model(fake_server), toy_request("orphaned")
    key = cache_key(model, list(req.messages), req.contract, req.contract_version, 0, 0)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO leases VALUES (?, 'killed-run', ?, ?, ?)", (key, _HOST, _dead_pid(), time.time() + 3600))
    started = time.monotonic()
    (res,) = Gateway(cache=SqliteCache(path)).run(model, [req])
    assert res.status == "ok" and res.calls_made == 1 and time.monotonic() - started < 10
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0  # put ends the lease
