"""Model-call cache backends compared: SQLite (embedded default) vs Redis vs PostgreSQL, get and put.

Why: a cluster needs one cache every worker can reach, and the shared backend is chosen by
measured speed, not taste. Each backend is the project's own class (``SqliteCache``, ``RedisCache``,
``PostgresCache``) against a real server started on 127.0.0.1 (``interviewsim_core.loopback``),
with entries shaped like real ones (a ~3 kB prompt, a ~600 B answer). Measured per backend:
puts of new keys, gets that hit, gets that miss (one process, one operation at a time, as the
gateway does per call), and puts from 4 threads at once. Both servers run with their production
durability (PostgreSQL ``fsync=on``, Redis ``appendonly yes`` + ``appendfsync everysec``); the
machine is shared, so each backend is measured in several interleaved rounds and the best kept.

Servers that cannot start here (Debian packages missing) are skipped with the reason; set
``BENCH_SKIP_SERVERS=1`` (or ``--skip-servers``) to measure SQLite only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

from interviewsim_core import loopback
from interviewsim_core.llm.cache import CachedEntry
from interviewsim_core.llm.shared_cache import open_cache

TARGET_GET_MS = 1.0
"""A cache hit must cost under 1 ms: negligible next to a model call (hundreds of ms)."""


def _entry(i: int) -> CachedEntry:
    prompt = ("You are a careful judge. Compare the reference answer with the candidate answer. " * 30)[:3000]
    return CachedEntry(raw=f'{{"score": {i % 5 + 1}, "explanation": "' + "because " * 70 + '"}',
                       messages=({"role": "system", "content": prompt}, {"role": "user", "content": f"item {i}"}),
                       model="openai/gpt-4.1", contract="content_similarity", prompt_tokens=800, completion_tokens=150,
                       cost_usd=0.0031)


def _rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def measure(name: str, url: str | None, path: Path, n: int, round_: int = 0) -> dict[str, float]:
    cache = open_cache(url, path)
    entries = [_entry(i) for i in range(n)]
    keys = [f"{name}-{round_}-{i:08d}" for i in range(n)]
    t = time.perf_counter()
    for k, e in zip(keys, entries):
        cache.put(k, e)
    put = _rate(n, time.perf_counter() - t)
    t = time.perf_counter()
    for k in keys:
        assert cache.get(k) is not None
    hit = _rate(n, time.perf_counter() - t)
    t = time.perf_counter()
    for k in keys:
        assert cache.get(k + "-absent") is None
    miss = _rate(n, time.perf_counter() - t)
    threads = 4
    more = [f"{name}-{round_}-t-{i:08d}" for i in range(n)]
    t = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda kv: cache.put(kv[0], kv[1]), zip(more, entries)))
    put_threads = _rate(n, time.perf_counter() - t)
    t = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(cache.get, more))
    get_threads = _rate(n, time.perf_counter() - t)
    close = getattr(cache, "close", None)
    if close:
        close()
    return {"put": put, "get_hit": hit, "get_miss": miss, "put_4_threads": put_threads, "get_4_threads": get_threads}


def _show(name: str, row: dict[str, float]) -> None:
    print(f"  {name:<10} put {row['put']:8.0f}/s   get hit {row['get_hit']:8.0f}/s ({1000 / row['get_hit']:5.2f} ms)   "
          f"get miss {row['get_miss']:8.0f}/s   x4 threads: put {row['put_4_threads']:8.0f}/s get {row['get_4_threads']:8.0f}/s",
          flush=True)


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    p = argparse.ArgumentParser(description="Cache backend benchmark")
    p.add_argument("-n", type=int, default=2000, help="operations per measurement")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each figure is kept")
    p.add_argument("--skip-servers", action="store_true", default=os.environ.get("BENCH_SKIP_SERVERS") == "1",
                   help="measure SQLite only (no PostgreSQL/Redis servers started)")
    a = p.parse_args(argv)
    print(f"N={a.n} operations each; entries ~3.6 kB; servers on 127.0.0.1 (started here, stopped by pid)")
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        targets: dict[str, tuple[str | None, Path]] = {"sqlite": (None, Path(tmp) / "llm.sqlite")}
        if a.skip_servers:
            print("  redis/postgres skipped (BENCH_SKIP_SERVERS=1 or --skip-servers)")
        else:
            why = loopback.available()
            for name, make in (("redis", loopback.RedisServer), ("postgres", lambda: loopback.PostgresServer(durable=True))):
                if why[name]:
                    print(f"  {name:<10} skipped: {why[name]}")
                    continue
                server = stack.enter_context(make())
                targets[name] = (server.url, Path(tmp) / "unused.sqlite")
        for r in range(a.rounds):
            for name, (url, path) in targets.items():
                row = measure(name, url, path, a.n, r)
                best = rows.setdefault(name, row)
                for k, v in row.items():
                    best[k] = max(best[k], v)
        for name, row in rows.items():
            _show(name, row)
    shared = {k: v for k, v in rows.items() if k != "sqlite"}
    base = rows["sqlite"]
    for name, row in shared.items():
        print(f"  {name} / sqlite: put {row['put'] / base['put']:5.2f}   get hit {row['get_hit'] / base['get_hit']:5.2f}   "
              f"put x4 {row['put_4_threads'] / base['put_4_threads']:5.2f}")
    if shared:
        # The gateway does cache I/O from a thread pool with many calls in flight, so the choice is
        # made on the 4-thread figures: one get plus one put per new call, one get per cached call.
        def per_call_ms(r: dict[str, float]) -> float:
            return 1000 / r["get_4_threads"] + 1000 / r["put_4_threads"]

        best = min(shared, key=lambda k: per_call_ms(shared[k]))
        for name, row in shared.items():
            ms = 1000 / row["get_hit"]
            print(f"  {name}: get hit {ms:.2f} ms (target < {TARGET_GET_MS:.1f} ms: {'met' if ms < TARGET_GET_MS else 'NOT met'}); "
                  f"miss+put {1000 / row['get_miss'] + 1000 / row['put']:.2f} ms; "
                  f"get+put with 4 threads {per_call_ms(row):.3f} ms")
        print(f"  fastest shared backend: {best} (cache_url: {'redis://' if best == 'redis' else 'postgresql://'}...)")
    return rows


if __name__ == "__main__":
    main()
