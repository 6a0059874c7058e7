"""Persistent content-addressed cache of model outputs (SQLite, one row per key).

A 3-million-call evaluation is only affordable and resumable if nothing is ever asked twice,
so every output is stored under a key made of everything that can change it (``cache_key``) and
nothing that cannot (concurrency, timeouts, retries, the key's env var name). The raw text is
stored, never the parsed value: a parser fix re-parses old outputs for free, and an output that
broke its contract is re-parsed (and re-rejected) on reading instead of being taken as valid.

SQLite in WAL mode with a busy timeout lets Dagster's multiprocess executor write from several
processes at once; each entry is one ``INSERT OR IGNORE`` in its own transaction, so a killed
process leaves either the whole row or nothing. Errors are never stored. API keys are never
stored: only the model's ``identity()`` (which has no key) and the messages.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .types import ModelConfig

__all__ = ["CachedEntry", "CacheStats", "Cache", "SqliteCache", "NullCache", "cache_key", "embedding_key", "canonical_json"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    contract TEXT NOT NULL,
    raw TEXT NOT NULL,
    messages TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL
);
"""


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: equal content gives equal bytes on every machine."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def cache_key(model: ModelConfig, messages: Sequence[Mapping[str, Any]], contract: str, contract_version: str,
              sample_index: int, attempt: int) -> str:
    """sha256 of everything that can change an output, and nothing that cannot.

    ``attempt`` is the re-ask index (0 = first ask); retries after errors reuse the same key
    because an error is never stored.
    """
    payload = {
        "model": model.identity(),
        "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
        "contract": contract,
        "contract_version": contract_version,
        "sample_index": sample_index,
        "attempt": attempt,
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def embedding_key(identity: Mapping[str, Any], text: str) -> str:
    """Key of one text's vector under one embedding model (namespace 'embedding')."""
    payload = {"namespace": "embedding", "model": dict(identity), "text": text}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedEntry:
    """One stored model output: the raw text plus what it cost and the prompt it answered (for audit)."""

    raw: str
    messages: tuple[dict[str, str], ...] = ()
    model: str = ""
    contract: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    created: float = field(default_factory=time.time)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0


class Cache:
    """What the gateway needs from a cache. ``NullCache`` stores nothing; ``SqliteCache`` persists."""

    path: Path | None = None

    def __init__(self) -> None:
        self.stats = CacheStats()

    def get(self, key: str) -> CachedEntry | None:  # pragma: no cover - interface
        raise NotImplementedError

    def put(self, key: str, entry: CachedEntry) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def put_vectors(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class NullCache(Cache):
    """No caching: every call goes to the provider (benchmarks, or when a caller wants fresh samples)."""

    def get(self, key: str) -> CachedEntry | None:
        self.stats.misses += 1
        return None

    def put(self, key: str, entry: CachedEntry) -> None:
        return None

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        self.stats.misses += len(keys)
        return {}

    def put_vectors(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        return None


class SqliteCache(Cache):
    """The persistent cache. Safe to share one file between threads and processes.

    One connection per process (re-opened after a fork, since SQLite connections must not cross
    one), guarded by a lock because the gateway's loop thread and caller threads may both use it.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 30_000):
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        with self._lock:
            self._connection()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a crash may lose the last commits but never corrupts the file.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for process pools: the child opens its own connection.
        return {"path": self.path, "busy_timeout_ms": self._busy_timeout_ms}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], busy_timeout_ms=state["busy_timeout_ms"])  # type: ignore[misc]

    def get(self, key: str) -> CachedEntry | None:
        with self._lock:
            row = self._connection().execute(
                "SELECT raw, messages, model, contract, prompt_tokens, completion_tokens, cost_usd, created "
                "FROM calls WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.stats.misses += 1
                return None
            self.stats.hits += 1
        raw, messages, model, contract, pt, ct, cost, created = row
        return CachedEntry(raw=raw, messages=tuple(json.loads(messages)), model=model, contract=contract,
                           prompt_tokens=pt, completion_tokens=ct, cost_usd=cost, created=created)

    def put(self, key: str, entry: CachedEntry) -> None:
        """Store once: the first writer wins, so concurrent writers of one key never clash."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT OR IGNORE INTO calls (key, model, contract, raw, messages, prompt_tokens, "
                    "completion_tokens, cost_usd, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, entry.model, entry.contract, entry.raw, canonical_json(list(entry.messages)),
                     int(entry.prompt_tokens), int(entry.completion_tokens), float(entry.cost_usd), entry.created))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self.stats.writes += 1

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            conn = self._connection()
            for chunk in _chunks(list(keys), 500):
                marks = ",".join("?" * len(chunk))
                for key, blob in conn.execute(f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk):
                    out[key] = np.frombuffer(blob, dtype=np.float32).copy()
            self.stats.hits += len(out)
            self.stats.misses += len(keys) - len(out)
        return out

    def put_vectors(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        now = time.time()
        rows = [(k, model, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes(), now) for k, v in vectors.items()]
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR IGNORE INTO embeddings (key, model, dim, vector, created) "
                                 "VALUES (?, ?, ?, ?, ?)", rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self.stats.writes += len(rows)

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def keys(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._connection().execute("SELECT key FROM calls ORDER BY key")]


def _chunks(items: list[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]
