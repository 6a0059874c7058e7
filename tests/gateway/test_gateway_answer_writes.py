"""Issue 20 (kill and resume): an answer that arrived is stored at once, not after other calls' look-ups.

A kill loses every answer that has reached the process but is not yet in the cache. Answer writes
used to share the look-up pool and the cache lock with every other call's look-up and lease; with
look-ups slowed the way another process holding SQLite's write lock slows them, an answer waited
behind all of them. These tests slow look-ups with sleeps (not CPU), so their margins do not depend
on the machine's load.
"""

from __future__ import annotations

import threading
import time

from gateway_support import fake_model

from interviewsim_core.llm.cache import CachedEntry, SqliteCache, _PriorityLock
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.types import CallRequest

LEASE_WAIT_S = 0.25
CALLS = 12


class SlowLeases(SqliteCache):
    """Each lease first holds the cache lock for LEASE_WAIT_S (as a busy SQLite write lock would)."""

    def lease(self, key: str, ttl_s: float) -> bool:
        with self._lock:
            time.sleep(LEASE_WAIT_S)
        return super().lease(key, ttl_s)


def test_an_answer_is_stored_before_the_lookups_queued_behind_it(tmp_path, fake_server, planted_key):
    cache = SlowLeases(tmp_path / "cache.sqlite")
    gw = Gateway(cache=cache)
    store_s: list[float] = []
    store = gw._store

    async def timed_store(key: str, entry: CachedEntry, *rest: object) -> None:
        started = time.monotonic()
        await store(key, entry, *rest)
        store_s.append(time.monotonic() - started)

    gw._store = timed_store  # type: ignore[method-assign]
    model = fake_model(fake_server, max_concurrency=CALLS)
    requests = [CallRequest(messages=({"role": "user", "content": f"question {i}"},), contract="free",
                            contract_version="1", item_id=str(i)) for i in range(CALLS)]
    results = gw.run(model, requests)
    assert [r.status for r in results] == ["ok"] * CALLS
    assert len(cache) == CALLS
    # Each write waits for at most the lease being taken at that moment; behind a queue of them
    # (the old path) an answer waited several LEASE_WAIT_S.
    print(f"\nanswer write latency with {CALLS} slow leases queued: max {max(store_s):.3f} s")
    assert max(store_s) < 2.5 * LEASE_WAIT_S, sorted(round(s, 3) for s in store_s)


def test_an_urgent_holder_goes_before_every_plain_waiter():
    lock = _PriorityLock()
    order: list[str] = []
    lock.acquire()

    def take(name: str, urgent: bool) -> None:
        lock.acquire(urgent=urgent)
        order.append(name)
        lock.release()

    plain = [threading.Thread(target=take, args=(f"plain{i}", False)) for i in range(3)]
    for t in plain:
        t.start()
    time.sleep(0.1)
    urgent = threading.Thread(target=take, args=("urgent", True))
    urgent.start()
    time.sleep(0.1)
    lock.release()
    for t in [*plain, urgent]:
        t.join(5)
    assert order[0] == "urgent" and sorted(order[1:]) == ["plain0", "plain1", "plain2"]
    assert lock.acquire(timeout=0.1)  # free again
    lock.release()


def test_put_many_is_one_transaction(tmp_path):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    items = [(f"k{i}", CachedEntry(raw=f"answer {i}", messages=({"role": "user", "content": f"q{i}"},)))
             for i in range(5)]
    cache.put_many(items)
    assert [cache.get(k).raw for k, _ in items] == [e.raw for _, e in items]
    assert cache.get("k3").messages == ({"role": "user", "content": "q3"},)



def test_closing_the_gateway_ends_its_writer_thread(tmp_path, fake_server, planted_key):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    gw = Gateway(cache=cache)
    req = CallRequest(messages=({"role": "user", "content": "one"},), contract="free", contract_version="1")
    assert gw.run(fake_model(fake_server), [req])[0].status == "ok"
    thread = gw._writer._thread
    assert thread is not None and thread.is_alive()
    gw.close()
    assert not thread.is_alive() and len(SqliteCache(tmp_path / "cache.sqlite")) == 1
