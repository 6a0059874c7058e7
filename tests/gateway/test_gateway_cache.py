"""The persistent cache: keys, round trips, several writing processes, a killed writer."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from interviewsim_core.llm.cache import CachedEntry, NullCache, SqliteCache, cache_key, embedding_key
from interviewsim_core.llm.types import ModelConfig

REPO = Path(__file__).resolve().parents[2]
MSGS = [{"role": "user", "content": "How was the harvest?"}]


def _key(model: ModelConfig, **kw) -> str:
    args = dict(messages=MSGS, contract="content_similarity", contract_version="1+1", sample_index=0, attempt=0)
    args.update(kw)
    return cache_key(model, **args)


def test_key_covers_what_changes_output_and_nothing_else():
    base = ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1")
    k = _key(base)
    changed = [
        ModelConfig(model="openai/gpt-4.1-mini", api_base="http://a/v1"),
        ModelConfig(model="openai/gpt-4.1", api_base="http://b/v1"),
        ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", temperature=0.7),
        ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", top_p=0.9),
        ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", seed=3),
        ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", max_tokens=100),
        ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", response_format={"type": "json_object"}),
        ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", extra_params={"stop": ["\n"]}),
    ]
    assert len({k, *(_key(m) for m in changed)}) == len(changed) + 1
    same = ModelConfig(model="openai/gpt-4.1", api_base="http://a/v1", max_concurrency=3, timeout_s=1,
                       max_retries=0, max_total_wait_s=1, max_reasks=0, api_key_env="OTHER", label="judge A")
    assert _key(same) == k
    assert _key(base, messages=[{"role": "user", "content": "How was the harvest? "}]) != k
    assert _key(base, contract="factual_consistency") != k
    assert _key(base, contract_version="2+1") != k
    assert _key(base, attempt=1) != k
    assert len({_key(base, sample_index=i) for i in range(3)}) == 3
    assert _key(base) == k  # stable


def test_round_trip_and_first_writer_wins(tmp_path):
    cache = SqliteCache(tmp_path / "c.sqlite")
    entry = CachedEntry(raw='{"score": 4}', messages=tuple(MSGS), model="openai/x", contract="cs",
                        prompt_tokens=12, completion_tokens=5, cost_usd=0.0012)
    assert cache.get("k") is None
    cache.put("k", entry)
    cache.put("k", CachedEntry(raw="other"))
    again = SqliteCache(tmp_path / "c.sqlite").get("k")
    assert again == entry
    assert len(cache) == 1 and cache.stats.hits == 0 and cache.stats.misses == 1
    null = NullCache()
    null.put("k", entry)
    assert null.get("k") is None


def test_vectors_round_trip(tmp_path):
    cache = SqliteCache(tmp_path / "c.sqlite")
    keys = [embedding_key({"model": "m"}, t) for t in ("a", "b")]
    cache.put_vectors("m", {keys[0]: np.array([0.6, 0.8], dtype=np.float32)})
    got = cache.get_vectors(keys)
    assert list(got) == [keys[0]] and got[keys[0]].dtype == np.float32
    np.testing.assert_allclose(got[keys[0]], [0.6, 0.8])


_WRITER = textwrap.dedent("""
    import sys, time
    from interviewsim_core.llm.cache import SqliteCache, CachedEntry
    path, worker, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cache = SqliteCache(path)
    i = 0
    while n < 0 or i < n:
        # keys overlap across workers (i), payload says who wrote it
        cache.put(f"key-{i}", CachedEntry(raw=f"raw-{i}", messages=({"role": "user", "content": f"m{i}"},),
                                          model=f"w{worker}", prompt_tokens=i))
        if n < 0 and i == 50:
            print("ready", flush=True)
        i += 1
""")


def _spawn(path: Path, worker: int, n: int, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(worker), str(n)], env=env, cwd=REPO, **kw)


def test_several_processes_write_at_once(tmp_path):
    path = tmp_path / "shared.sqlite"
    SqliteCache(path)  # create the schema first, as the gateway's process would
    procs = [_spawn(path, w, 150) for w in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    cache = SqliteCache(path)
    assert len(cache) == 150  # one row per key, none lost, none duplicated
    for i in (0, 77, 149):
        entry = cache.get(f"key-{i}")
        assert entry.raw == f"raw-{i}" and entry.prompt_tokens == i and entry.model in {"w0", "w1", "w2", "w3"}


def test_readable_after_writer_is_killed(tmp_path):
    path = tmp_path / "crash.sqlite"
    proc = _spawn(path, 0, -1, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache = SqliteCache(path)
    n = len(cache)
    assert n > 50
    for key in cache.keys():
        i = int(key.split("-")[1])
        assert cache.get(key).raw == f"raw-{i}"  # every stored row is whole
    cache.put("after", CachedEntry(raw="still writable"))
    assert cache.get("after").raw == "still writable"


@pytest.mark.parametrize("cache_cls", [SqliteCache])
def test_cache_pickles_for_process_pools(tmp_path, cache_cls):
    import pickle

    cache = cache_cls(tmp_path / "p.sqlite")
    cache.put("k", CachedEntry(raw="x"))
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.get("k").raw == "x"
