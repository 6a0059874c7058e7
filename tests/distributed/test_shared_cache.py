"""The shared caches (Redis, PostgreSQL) keep the SQLite cache's rules, checked on real servers.

Same key (the gateway computes it; a shared backend stores what SQLite would under the same key),
first writer wins (also between processes), vectors round trip, errors never cached, a second
gateway on the same backend answers every call from the cache, and leases give one payer per key
(renewed by their owner, refused to others, released on failure, ended by the answer, taken over
when expired or when the owner process is gone).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from interviewsim_core.llm.cache import CachedEntry, SqliteCache, embedding_key
from interviewsim_core.llm.faults import FaultSpec
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.shared_cache import PostgresCache, RedisCache, open_cache
from interviewsim_core.llm.types import CallRequest, ModelConfig

pytestmark = pytest.mark.distributed

MSGS = ({"role": "user", "content": "How was the harvest?"},)
OFFLINE = ModelConfig(model="offline/extractive", max_retries=0, max_total_wait_s=1.0)


@pytest.fixture(params=["redis", "postgres"])
def backend(request, servers):
    pg, redis_server, _s3 = servers
    if request.param == "redis":
        url = redis_server.url
        cache = RedisCache(url)
        cache._conn().flushdb()
    else:
        url = pg.url
        cache = PostgresCache(url)
        cache._execute("TRUNCATE interviewsim_llm_calls, interviewsim_embeddings, interviewsim_llm_leases, "
                       "interviewsim_prompt_chunks")
    yield url, cache
    cache.close()


def _requests(n: int = 6) -> list[CallRequest]:
    from interviewsim_core.contracts import content_similarity as cs

    return [CallRequest(messages=tuple(cs.build_messages(reference=f"The harvest of year {i} was poor.",
                                                         candidate=f"Year {i} had a poor harvest.")),
                        contract=cs.NAME, contract_version=f"{cs.CONTRACT_VERSION}+{cs.PARSER_VERSION}", parser=cs.parse)
            for i in range(n)]


def test_round_trip_first_writer_wins_and_vectors(backend):
    url, cache = backend
    entry = CachedEntry(raw='{"score": 4}', messages=MSGS, model="openai/x", contract="cs",
                        prompt_tokens=12, completion_tokens=5, cost_usd=0.0012, cached_prompt_tokens=7)
    assert cache.get("k") is None
    cache.put("k", entry)
    cache.put("k", CachedEntry(raw="other"))
    assert open_cache(url, "/nonexistent/unused.sqlite").get("k") == entry
    assert len(cache) == 1 and cache.keys() == ["k"]
    keys = [embedding_key({"model": "m"}, t) for t in ("a", "b")]
    cache.put_vectors("m", {keys[0]: np.array([0.6, 0.8], dtype=np.float32)})
    got = cache.get_vectors(keys)
    assert list(got) == [keys[0]] and got[keys[0]].dtype == np.float32
    np.testing.assert_allclose(got[keys[0]], [0.6, 0.8])


def test_prompts_are_chunked_once_and_read_back_exactly_and_old_entries_still_read(backend):
    """The SQLite cache's prompt encoding on the shared backends: a context repeated in every
    question is stored once; every prompt reads back byte for byte; entries written before still read."""
    import json

    url, cache = backend
    context = "\n".join(f"Training example question: question {i} about the harvest?\n"
                        f"Training example response: answer {i}, we brought the wheat in before the rain." for i in range(80))
    sent = {}
    for q in range(12):
        sent[f"q{q}"] = ({"role": "system", "content": "Speak as P1.\r\nKeep \u2028 separators."},
                         {"role": "user", "content": f"{context}\n\nNew question: {q}?"})
        cache.put(f"q{q}", CachedEntry(raw=f"a{q}", messages=sent[f"q{q}"], model="m", contract="generation"))
    other = open_cache(url, "/nonexistent/unused.sqlite")  # another worker reads them back
    for key, messages in sent.items():
        assert other.get(key).messages == messages and other.get_answer(key).raw == f"a{key[1:]}"
    if isinstance(cache, RedisCache):
        client = cache._conn()
        stored = sum(len(client.get(k)) for k in client.scan_iter(match="interviewsim:*"))
        client.set(RedisCache.CALL_PREFIX + "old", json.dumps({"raw": "r", "messages": list(MSGS), "model": "m",
                   "contract": "c", "prompt_tokens": 1, "completion_tokens": 2, "cost_usd": 0.0, "created": 0.0}))
    else:
        stored = (cache._execute("SELECT SUM(LENGTH(data)) FROM interviewsim_prompt_chunks", fetch="one")[0]
                  + cache._execute("SELECT SUM(LENGTH(messages) + COALESCE(LENGTH(recipe), 0)) "
                                   "FROM interviewsim_llm_calls", fetch="one")[0])
        cache._execute("INSERT INTO interviewsim_llm_calls (key, model, contract, raw, messages, prompt_tokens, "
                       "completion_tokens, cost_usd, created) VALUES ('old', 'm', 'c', 'r', %s, 1, 2, 0.0, 0.0)",
                       (json.dumps(list(MSGS)),))
    assert stored < len(context)  # 12 prompts cost less than one verbatim copy of their context
    assert other.get("old").messages == MSGS and other.get("old").completion_tokens == 2


def test_same_keys_as_sqlite_errors_never_cached_and_a_second_gateway_pays_nothing(backend, tmp_path):
    url, cache = backend
    reqs = _requests()
    # Every call fails (injected 500, no retries): nothing may be stored.
    failing = Gateway(cache=open_cache(url, tmp_path / "unused.sqlite"), faults=FaultSpec(server_error_rate=1.0))
    assert all(r.status == "failed" for r in failing.run(OFFLINE, reqs))
    assert len(cache) == 0
    first = Gateway(cache=open_cache(url, tmp_path / "unused.sqlite"))
    results = first.run(OFFLINE, reqs)
    assert all(r.status == "ok" for r in results) and first.stats.calls_made == len(reqs)
    sqlite = SqliteCache(tmp_path / "ref.sqlite")
    Gateway(cache=sqlite).run(OFFLINE, reqs)
    assert cache.keys() == sqlite.keys()
    for key in sqlite.keys():
        assert cache.get(key).raw == sqlite.get(key).raw
    second = Gateway(cache=open_cache(url, tmp_path / "unused.sqlite"))
    again = second.run(OFFLINE, reqs)
    assert second.stats.calls_made == 0 and second.stats.cache_hits == len(reqs)
    assert [r.value for r in again] == [r.value for r in results]
    assert not (tmp_path / "unused.sqlite").exists()


_WRITER = textwrap.dedent("""
    import sys
    from interviewsim_core.llm.cache import CachedEntry
    from interviewsim_core.llm.shared_cache import open_cache
    url, who = sys.argv[1], sys.argv[2]
    cache = open_cache(url, "/nonexistent/unused.sqlite")
    for i in range(300):
        cache.put(f"key-{i}", CachedEntry(raw=f"{who}-{i}-" + "x" * 2000))
""")


def test_two_processes_writing_the_same_keys_leave_one_whole_entry_each(backend):
    url, cache = backend
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, url, who]) for who in ("A", "B")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert len(cache) == 300
    for i in range(300):
        raw = cache.get(f"key-{i}").raw
        assert raw in (f"A-{i}-" + "x" * 2000, f"B-{i}-" + "x" * 2000)


_LEASE_HOLDER = textwrap.dedent("""
    import sys
    from interviewsim_core.llm.shared_cache import open_cache
    cache = open_cache(sys.argv[1], "/nonexistent/unused.sqlite")
    assert cache.lease("dead-owner", 600)
    print(cache.owner, flush=True)
""")


def test_leases_give_one_payer_per_key(backend):
    import os
    import socket
    import time

    url, first = backend
    second = open_cache(url, "/nonexistent/unused.sqlite")  # another owner, as another process would be
    assert first.owner != second.owner
    assert first.lease("k", 60) and first.lease("k", 60)  # taken, then renewed by its owner
    assert not second.lease("k", 60)
    assert first.lease_holder("k") == (socket.gethostname(), os.getpid())
    first.release("k")  # the call failed: someone else may ask
    assert second.lease("k", 60) and not first.lease("k", 60)
    second.put("k", CachedEntry(raw="answer"))  # the answer ends the lease
    assert first.lease_holder("k") is None
    assert first.lease("short", 0.2) and not second.lease("short", 60)
    time.sleep(0.4)
    assert second.lease("short", 60)  # expired: taken over
    # A lease held by a process that is gone (same host) is taken over at once.
    out = subprocess.run([sys.executable, "-c", _LEASE_HOLDER, url], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert first.lease("dead-owner", 60)
    second.close()
