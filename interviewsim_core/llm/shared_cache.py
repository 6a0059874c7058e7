"""Model-call caches that several machines share: Redis and PostgreSQL, chosen by a URL.

A cluster's workers must never pay twice for the same call, so they need one cache they can all
reach. ``SqliteCache`` (``cache.py``) stays the embedded default; these two backends keep exactly
its rules, because they store the same ``CachedEntry`` under the same ``cache_key``:

- the key is computed by the gateway (``cache_key``), never here, so a key means the same call on
  every backend and an SQLite cache can be copied into a shared one key for key;
- the first writer of a key wins (``SET NX`` / ``INSERT ... ON CONFLICT DO NOTHING``), so two
  workers answering the same call at once never overwrite each other;
- errors are never stored (the gateway only ``put``s a completion), raw text is stored, never the
  parsed value;
- leases (``lease``/``release``/``lease_holder``, the SQLite cache's protocol for "one payer per key
  across processes"): a worker about to ask for a key claims it for ``ttl_s`` seconds; another worker
  missing the same key is told no and waits for the answer. A lease expires, is released when the
  call fails, ends when the answer is ``put``, and is taken over when its owner process (same host)
  is gone. The owner is ``host:pid:random``, since pids repeat across machines;
- no credentials are stored or configured in a URL: Redis reads ``REDIS_PASSWORD`` (and optional
  ``REDIS_USERNAME``), PostgreSQL reads libpq's ``PGPASSWORD`` / ``~/.pgpass``. A URL that carries
  a password is refused, because the URL is part of the run configuration that Dagster shows.

``make bench`` (``benchmarks/bench_cache.py``) measures get/put of the three backends; docs/CLUSTER.md
records which shared backend it favours and why.

Prompts are stored as the SQLite cache stores them before packing (``prompt_store.py``): a row
keeps the recipe of chunk ids, and each distinct chunk is stored once (deflated) in the backend's
chunk table, written before the row, so a row never names a chunk that is not there. A
personality's chrono context is thus stored once, not once per question; there is no pack stage
(no compaction on a shared server). Entries written before (verbatim messages) still read.

Each backend keeps its storage layout in one place (``_encode``/``_decode`` and the key prefixes or
the table DDL) so that changes to the SQLite cache's stored form (compressed prompts, lease rows
for in-flight keys, disk-full handling) are mirrored in one spot per backend.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from ..errors import ConfigError
from ..processes import HOST as _HOST
from ..processes import owner_gone as _dead  # one rule for leases of dead owners, whatever the backend
from .cache import Cache, CachedEntry, SqliteCache, canonical_json, in_batches, vector_blob, vector_of
from .prompt_store import deflate, encode_messages, inflate, rebuild_messages

__all__ = ["PostgresCache", "RedisCache", "cache_label", "open_cache", "validate_cache_url"]

SCHEMES = {"redis": "redis", "rediss": "redis", "postgresql": "postgres", "postgres": "postgres"}


def validate_cache_url(url: str) -> str:
    """Check a shared-cache URL: known scheme, a host, and no password in it.

    Raises:
        ConfigError: naming the rule that failed.
    """
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ConfigError(f"cache_url {cache_label(url)!r}: scheme must be one of {sorted(SCHEMES)} "
                          "(or leave cache_url unset for the SQLite cache at cache_path)")
    if parts.password:
        raise ConfigError(f"cache_url {cache_label(url)!r}: a password must not be in the URL (it would reach run "
                          "configuration and logs); set REDIS_PASSWORD or PGPASSWORD in the environment")
    if not parts.hostname:
        raise ConfigError(f"cache_url {cache_label(url)!r}: a host is required")
    return url


def cache_label(url: str) -> str:
    """The URL with any password masked: safe for logs and metadata."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def open_cache(cache_url: str | None, cache_path: str | os.PathLike[str]) -> Cache:
    """The configured cache: the shared backend of ``cache_url``, else SQLite at ``cache_path``."""
    if not cache_url:
        Path(cache_path).parent.mkdir(parents=True, exist_ok=True)
        return SqliteCache(cache_path)
    validate_cache_url(cache_url)
    kind = SCHEMES[urlsplit(cache_url).scheme]
    return RedisCache(cache_url) if kind == "redis" else PostgresCache(cache_url)


def _encode(entry: CachedEntry, recipe: bytes) -> dict[str, Any]:
    return {"raw": entry.raw, "recipe": base64.b64encode(recipe).decode("ascii"), "model": entry.model,
            "contract": entry.contract, "prompt_tokens": int(entry.prompt_tokens),
            "completion_tokens": int(entry.completion_tokens), "cost_usd": float(entry.cost_usd),
            "created": float(entry.created), "cached_prompt_tokens": int(entry.cached_prompt_tokens)}


def _decode(data: Mapping[str, Any], messages: tuple[dict[str, str], ...]) -> CachedEntry:
    return CachedEntry(raw=data["raw"], messages=messages, model=data["model"],
                       contract=data["contract"], prompt_tokens=int(data["prompt_tokens"]),
                       completion_tokens=int(data["completion_tokens"]), cost_usd=float(data["cost_usd"]),
                       created=float(data["created"]), cached_prompt_tokens=int(data.get("cached_prompt_tokens", 0)))


def _inflated(found: Mapping[bytes, bytes]) -> dict[bytes, bytes]:
    return {h: inflate(d) for h, d in found.items()}


class _PerProcess(Cache):
    """One client per process, re-made after a fork (sockets must not be shared across a fork)."""

    def __init__(self, url: str):
        super().__init__()
        self.url = validate_cache_url(url)
        self.path = None
        self._lock = threading.Lock()
        self._client: Any = None
        self._pid = -1
        self._owner = ""

    def _connect(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def _conn(self) -> Any:
        if self._client is None or self._pid != os.getpid():
            self._client, self._pid = self._connect(), os.getpid()
            self._owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
            self._known: set[bytes] = set()
        return self._client

    def _encode_prompt(self, entry: CachedEntry) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        """(the recipe, the chunks this process has not stored yet, deflated)."""
        self._conn()
        recipe, items = encode_messages(entry.messages, self._known)
        if len(self._known) > 200_000:  # a memo of chunks already stored, not a second cache
            self._known.clear()
        return recipe, [(h, deflate(d)) for h, d in items]

    def get_answer(self, key: str) -> CachedEntry | None:
        return self._get(key, with_messages=False)

    def get(self, key: str) -> CachedEntry | None:
        return self._get(key, with_messages=True)

    def _get(self, key: str, *, with_messages: bool) -> CachedEntry | None:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def owner(self) -> str:
        """This process's lease owner id (``host:pid:random``)."""
        self._conn()
        return self._owner

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self.url}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["url"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({cache_label(self.url)!r})"


class RedisCache(_PerProcess):
    """Entries as JSON strings under ``interviewsim:call:<key>`` (the prompt as a recipe, its chunks
    deflated under ``interviewsim:chunk:<id>``), vectors as float32 bytes.

    Run Redis with persistence (``appendonly yes``) and no eviction (``maxmemory-policy
    noeviction``): an evicted entry is a call paid again.
    """

    CALL_PREFIX = "interviewsim:call:"
    CHUNK_PREFIX = "interviewsim:chunk:"
    VECTOR_PREFIX = "interviewsim:emb:"
    LEASE_PREFIX = "interviewsim:lease:"
    _RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"

    def _connect(self) -> Any:
        import redis

        return redis.Redis.from_url(self.url, username=os.environ.get("REDIS_USERNAME") or None,
                                    password=os.environ.get("REDIS_PASSWORD") or None,
                                    socket_timeout=30, socket_connect_timeout=10, health_check_interval=30)

    def _get(self, key: str, *, with_messages: bool) -> CachedEntry | None:
        value = self._conn().get(self.CALL_PREFIX + key)
        with self._lock:
            if value is None:
                self.stats.misses += 1
                return None
            self.stats.hits += 1
        data = json.loads(value)
        messages: tuple[dict[str, str], ...] = ()
        if with_messages:
            if "recipe" in data:
                messages = rebuild_messages(base64.b64decode(data["recipe"]), self._chunks)
            else:  # written before the chunk store: the messages verbatim
                messages = tuple(data["messages"])
        return _decode(data, messages)

    def _chunks(self, ids: set[bytes], _group: bool) -> dict[bytes, bytes]:
        ids_ = sorted(ids)
        found = {}
        for i in range(0, len(ids_), 500):
            part = ids_[i:i + 500]
            for h, blob in zip(part, self._conn().mget([self.CHUNK_PREFIX + h.hex() for h in part])):
                if blob is not None:
                    found[h] = blob
        return _inflated(found)

    def put(self, key: str, entry: CachedEntry) -> None:
        """Store once (``SET NX``): the first writer wins. New chunks go first (``SET NX`` each)."""
        recipe, chunks = self._encode_prompt(entry)
        client = self._conn()
        if chunks:
            pipe = client.pipeline(transaction=False)
            for h, data in chunks:
                pipe.set(self.CHUNK_PREFIX + h.hex(), data, nx=True)
            pipe.execute()
        client.set(self.CALL_PREFIX + key, canonical_json(_encode(entry, recipe)).encode("utf-8"), nx=True)
        self._known.update(h for h, _ in chunks)
        self.release(key)
        with self._lock:
            self.stats.writes += 1

    def lease(self, key: str, ttl_s: float) -> bool:
        """``SET NX PX``: the lease value is the owner; Redis expires it after ``ttl_s``."""
        client, name = self._conn(), self.LEASE_PREFIX + key
        value = f"{self._owner}|{_HOST}|{os.getpid()}"
        ttl_ms = max(1, int(ttl_s * 1000))
        if client.set(name, value, nx=True, px=ttl_ms):
            return True
        held = client.get(name)
        if held is None:  # expired between the two commands
            return bool(client.set(name, value, nx=True, px=ttl_ms))
        owner, host, pid = held.decode("utf-8").rsplit("|", 2)
        if owner == self._owner or _dead(host, int(pid)):
            # Ours (renew) or a dead owner's (take over): replace only if it is still that value.
            with client.pipeline() as pipe:
                try:
                    pipe.watch(name)
                    if pipe.get(name) != held:
                        return False
                    pipe.multi()
                    pipe.set(name, value, px=ttl_ms)
                    pipe.execute()
                    return True
                except Exception as exc:  # redis.WatchError: someone else changed it first
                    if type(exc).__name__ == "WatchError":
                        return False
                    raise
        return False

    def release(self, key: str) -> None:
        """Delete the lease only if this owner still holds it (atomic compare-and-delete)."""
        client = self._conn()
        client.eval(self._RELEASE, 1, self.LEASE_PREFIX + key, f"{self._owner}|{_HOST}|{os.getpid()}")

    def lease_holder(self, key: str) -> tuple[str, int] | None:
        held = self._conn().get(self.LEASE_PREFIX + key)
        if held is None:
            return None
        _owner, host, pid = held.decode("utf-8").rsplit("|", 2)
        return host, int(pid)

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list(keys)
        out: dict[str, np.ndarray] = {}
        for chunk in in_batches(keys):
            for key, blob in zip(chunk, self._conn().mget([self.VECTOR_PREFIX + k for k in chunk])):
                if blob is not None:
                    out[key] = vector_of(blob)
        with self._lock:
            self.stats.hits += len(out)
            self.stats.misses += len(keys) - len(out)
        return out

    def put_vectors(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        pipe = self._conn().pipeline(transaction=False)
        for key, vec in vectors.items():
            pipe.set(self.VECTOR_PREFIX + key, vector_blob(vec), nx=True)
        pipe.execute()
        with self._lock:
            self.stats.writes += len(vectors)

    def keys(self) -> list[str]:
        n = len(self.CALL_PREFIX)
        return sorted(k.decode("utf-8")[n:] for k in self._conn().scan_iter(match=self.CALL_PREFIX + "*", count=1000))

    def __len__(self) -> int:
        return len(self.keys())

    def close(self) -> None:
        if self._client is not None and self._pid == os.getpid():
            self._client.close()
        self._client = None


_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS interviewsim_llm_calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    contract TEXT NOT NULL,
    raw TEXT NOT NULL,
    messages TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd DOUBLE PRECISION NOT NULL,
    created DOUBLE PRECISION NOT NULL
);
ALTER TABLE interviewsim_llm_calls ADD COLUMN IF NOT EXISTS cached_prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE interviewsim_llm_calls ADD COLUMN IF NOT EXISTS recipe BYTEA;
CREATE TABLE IF NOT EXISTS interviewsim_prompt_chunks (
    hash BYTEA PRIMARY KEY,
    data BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS interviewsim_llm_leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS interviewsim_embeddings (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BYTEA NOT NULL,
    created DOUBLE PRECISION NOT NULL
);
"""
_PG_SCHEMA_LOCK = 727_130_015
"""Advisory lock id serialising ``CREATE TABLE IF NOT EXISTS`` (not race-free on its own in PostgreSQL)."""


class PostgresCache(_PerProcess):
    """The SQLite cache's two tables, in PostgreSQL (the database can be the Dagster instance's).

    Autocommit: a ``put`` inserts its new prompt chunks, then the row, each one ``INSERT ... ON
    CONFLICT DO NOTHING`` statement, so a killed worker leaves the whole row or nothing (at worst
    chunks no row names yet), as with SQLite.
    """

    def _connect(self) -> Any:
        import psycopg2

        conn = psycopg2.connect(self.url, connect_timeout=10, application_name="interviewsim-cache")
        conn.autocommit = True
        with conn.cursor() as cur:
            # The SQLite cache's durability (WAL, synchronous=NORMAL) and Redis' (appendfsync everysec):
            # a crash may lose the last fraction of a second of entries (calls paid again), never
            # corrupt one. Waiting for an fsync per entry made puts ~25x slower (make bench).
            cur.execute("SET synchronous_commit TO off")
            cur.execute("SELECT pg_advisory_lock(%s)", (_PG_SCHEMA_LOCK,))
            try:
                cur.execute(_PG_SCHEMA)
            finally:
                cur.execute("SELECT pg_advisory_unlock(%s)", (_PG_SCHEMA_LOCK,))
        return conn

    def _execute(self, sql: str, params: Any = None, *, fetch: str | None = None) -> Any:
        with self._lock:
            with self._conn().cursor() as cur:
                cur.execute(sql, params)
                if fetch == "one":
                    return cur.fetchone()
                if fetch == "all":
                    return cur.fetchall()
                return None

    def _get(self, key: str, *, with_messages: bool) -> CachedEntry | None:
        row = self._execute("SELECT raw, model, contract, prompt_tokens, completion_tokens, cost_usd, created, "
                            "cached_prompt_tokens" + (", messages, recipe" if with_messages else "") +
                            " FROM interviewsim_llm_calls WHERE key = %s", (key,), fetch="one")
        with self._lock:
            if row is None:
                self.stats.misses += 1
                return None
            self.stats.hits += 1
        raw, model, contract, pt, ct, cost, created, cached = row[:8]
        messages: tuple[dict[str, str], ...] = ()
        if with_messages:
            verbatim, recipe = row[8:]
            # A row written before the chunk store holds the messages verbatim (and no recipe).
            messages = rebuild_messages(bytes(recipe), self._chunks) if recipe is not None else tuple(json.loads(verbatim))
        return CachedEntry(raw=raw, messages=messages, model=model, contract=contract,
                           prompt_tokens=pt, completion_tokens=ct, cost_usd=cost, created=created,
                           cached_prompt_tokens=int(cached or 0))

    def _chunks(self, ids: set[bytes], _group: bool) -> dict[bytes, bytes]:
        import psycopg2

        rows = self._execute("SELECT hash, data FROM interviewsim_prompt_chunks WHERE hash = ANY(%s)",
                             ([psycopg2.Binary(h) for h in ids],), fetch="all")
        return _inflated({bytes(h): bytes(d) for h, d in rows})

    def put(self, key: str, entry: CachedEntry) -> None:
        """Store once: the first writer wins. New chunks go first (``ON CONFLICT DO NOTHING``)."""
        import psycopg2
        import psycopg2.extras

        recipe, chunks = self._encode_prompt(entry)
        if chunks:
            with self._lock:
                with self._conn().cursor() as cur:
                    psycopg2.extras.execute_values(
                        cur, "INSERT INTO interviewsim_prompt_chunks (hash, data) VALUES %s ON CONFLICT (hash) DO NOTHING",
                        [(psycopg2.Binary(h), psycopg2.Binary(d)) for h, d in chunks])
        self._execute(
            "INSERT INTO interviewsim_llm_calls (key, model, contract, raw, messages, recipe, prompt_tokens, "
            "completion_tokens, cost_usd, created, cached_prompt_tokens) VALUES (%s, %s, %s, %s, '', %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (key) DO NOTHING",
            (key, entry.model, entry.contract, entry.raw, psycopg2.Binary(recipe),
             int(entry.prompt_tokens), int(entry.completion_tokens), float(entry.cost_usd), float(entry.created),
             int(entry.cached_prompt_tokens)))
        self._known.update(h for h, _ in chunks)
        self.release(key)
        with self._lock:
            self.stats.writes += 1

    def lease(self, key: str, ttl_s: float) -> bool:
        """One statement: insert the lease, or take it over if it is ours or expired."""
        now = time.time()
        self._conn()
        row = self._execute(
            "INSERT INTO interviewsim_llm_leases (key, owner, host, pid, expires) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, host = EXCLUDED.host, pid = EXCLUDED.pid, "
            "expires = EXCLUDED.expires WHERE interviewsim_llm_leases.owner = EXCLUDED.owner "
            "OR interviewsim_llm_leases.expires < %s RETURNING owner",
            (key, self._owner, _HOST, os.getpid(), now + ttl_s, now), fetch="one")
        if row is not None:
            return True
        held = self._execute("SELECT owner, host, pid FROM interviewsim_llm_leases WHERE key = %s", (key,), fetch="one")
        if held is None:  # released meanwhile: try once more
            return self.lease(key, ttl_s)
        if _dead(held[1], int(held[2])):
            self._execute("DELETE FROM interviewsim_llm_leases WHERE key = %s AND owner = %s", (key, held[0]))
            return self.lease(key, ttl_s)
        return False

    def release(self, key: str) -> None:
        self._conn()
        self._execute("DELETE FROM interviewsim_llm_leases WHERE key = %s AND owner = %s", (key, self._owner))

    def lease_holder(self, key: str) -> tuple[str, int] | None:
        row = self._execute("SELECT host, pid FROM interviewsim_llm_leases WHERE key = %s", (key,), fetch="one")
        return None if row is None else (row[0], int(row[1]))

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        keys = list(keys)
        out: dict[str, np.ndarray] = {}
        for chunk in in_batches(keys):
            rows = self._execute("SELECT key, vector FROM interviewsim_embeddings WHERE key = ANY(%s)",
                                 (chunk,), fetch="all")
            for key, blob in rows:
                out[key] = vector_of(blob)
        with self._lock:
            self.stats.hits += len(out)
            self.stats.misses += len(keys) - len(out)
        return out

    def put_vectors(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        import psycopg2.extras

        now = time.time()
        rows = [(k, model, int(v.shape[0]), vector_blob(v), now) for k, v in vectors.items()]
        with self._lock:
            with self._conn().cursor() as cur:
                psycopg2.extras.execute_values(
                    cur, "INSERT INTO interviewsim_embeddings (key, model, dim, vector, created) VALUES %s "
                         "ON CONFLICT (key) DO NOTHING", rows)
            self.stats.writes += len(rows)

    def keys(self) -> list[str]:
        return [r[0] for r in self._execute("SELECT key FROM interviewsim_llm_calls ORDER BY key", fetch="all")]

    def __len__(self) -> int:
        return int(self._execute("SELECT COUNT(*) FROM interviewsim_llm_calls", fetch="one")[0])

    def close(self) -> None:
        with self._lock:
            if self._client is not None and self._pid == os.getpid():
                self._client.close()
            self._client = None
