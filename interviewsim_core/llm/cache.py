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

Prompts are stored for audit, but not verbatim per call: each message is cut into chunks at
content-defined line boundaries and every distinct chunk is stored once under its hash; a call
row keeps only a compact recipe. A personality's chrono context, repeated in every one of its
questions, is therefore stored once, and a retrieval method's examples are shared wherever the
same run of lines recurs. Chunks are then packed into zstd frames that see across chunks (see
``prompt_store.py``). ``get`` and ``prompt_of`` rebuild the exact messages (``interviewsim cache
show KEY`` prints them). Keys made by ``cache_key`` (sha256 hex) are stored as their 32 bytes.

Two processes on one cache never pay twice for one call: before asking, a process takes a
*lease* on the key (table ``leases``: owner, pid, host, expiry); another process that misses the
same key waits for the answer instead of asking. A lease whose owner died (same host, pid gone)
or expired is taken over.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..processes import HOST as _HOST
from ..processes import owner_gone as _dead
from .answer_journal import replay
from .cached_entry import CachedEntry
from .prompt_store import COMPACT_AFTER, PROMPT_TABLES, compact, decode_messages, encode_messages, pack_raw, unpack_raw
from .types import CallRequest, ModelConfig, canonical_json, scalar_json
from .wire import WireText

__all__ = ["CachedEntry", "CacheStats", "Cache", "CacheWriteError", "SqliteCache", "NullCache", "cache_key",
           "cache_write_errors", "embedding_key", "canonical_json", "write_errors_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key BLOB PRIMARY KEY,
    model TEXT NOT NULL,
    contract TEXT NOT NULL,
    raw TEXT NOT NULL,
    messages TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created REAL NOT NULL
);
""" + PROMPT_TABLES
_LAYOUT = 2
"""``PRAGMA user_version`` of a cache file created with 32-byte keys. Files of older layouts (0) may
hold keys as 64-character text: a miss there looks the text form up too."""
_HEX_KEY = re.compile(r"[0-9a-f]{64}")


def _stored_key(key: str) -> bytes | str:
    """How a key is stored: a sha256 hex key (every key the gateway makes) as its 32 bytes, half the
    size in the row and in the key index; any other key as text. SQLite never equates text and blob
    values, so the two forms cannot collide."""
    return bytes.fromhex(key) if len(key) == 64 and _HEX_KEY.fullmatch(key) else key


def _key_text(stored: bytes | str) -> str:
    return stored.hex() if isinstance(stored, bytes) else stored


class CacheWriteError(OSError):
    """The cache file could not be written (disk full, file-size limit, read-only, I/O error).

    Names the file and the real error. The gateway keeps the answer it could not store (the
    caller still gets it, so the run's tables are complete) and records the error so the run can
    exit non-zero (``Gateway.raise_for_cache_errors``): those answers will be paid for again.
    ``stored``: the disk was full, the reserve (``RESERVE_BYTES``) was freed and the write went
    through in its space; still raised, because nothing more may be sent.
    """

    def __init__(self, path: Path | None, cause: BaseException, *, stored: bool = False):
        self.path, self.cause, self.stored = path, cause, stored
        detail = f"{type(cause).__name__}: {cause}"
        code = getattr(cause, "sqlite_errorname", None)
        if code:
            detail += f" [{code}]"
        hint = ""
        if isinstance(cause, sqlite3.OperationalError) and any(
                w in str(cause).lower() for w in ("disk i/o", "full", "readonly", "read-only")):
            hint = " (disk full, a file-size limit or a read-only location?)"
        if stored:  # the disk is full, but the space of the reserve took what was being written
            hint += (f"; its reserve {reserve_path(path) if path else ''} was freed for the answers in flight, "
                     "and no further call is sent")
        super().__init__(f"cannot write the model-call cache {path}: {detail}{hint}")


RESERVE_BYTES = 1 << 20
"""Space a SQLite cache sets aside beside itself (``<cache>.reserve``) while the disk has room.

Why: when the disk fills, the calls in flight have been paid for and their answers have nowhere
to go; without a reserve a full 2 MB data root lost 8-16 paid answers per run (issue 20). On the
first full-disk write the reserve is deleted and the write retried in the space it held; the
gateway then sends nothing more (``Gateway.cache_error``). 1 MB holds well over a hundred answers
with their prompts' new chunks. Re-made by the next connection that opens the cache with room; deleted
when the last one closes (``_drop_reserve``), so a finished run leaves only the file."""


def reserve_path(cache_path: str | os.PathLike[str]) -> Path:
    p = Path(cache_path)
    return p.with_name(p.name + ".reserve")


def _make_reserve(cache_path: Path) -> None:
    """Best effort: no room (or no file system support) means no reserve, never an error."""
    path = reserve_path(cache_path)
    try:
        if path.stat().st_size >= RESERVE_BYTES:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            if hasattr(os, "posix_fallocate"):
                os.posix_fallocate(fd, 0, RESERVE_BYTES)  # real blocks, not a sparse file
            else:
                os.write(fd, b"\0" * RESERVE_BYTES)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the write-ahead log into the file and truncate it, without waiting: another process in the
    middle of a transaction makes this a no-op (the last connection to close checkpoints anyway)."""
    try:
        conn.execute("PRAGMA busy_timeout=0")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass  # best effort: the log is complete and is checkpointed by the next writer or closer


def _drop_reserve(cache_path: Path) -> None:
    """After this process's connection closed: delete the reserve when no connection is left on the file.

    SQLite deletes the ``-wal`` file when the last connection closes, so its absence says no other
    process holds the file open; one that does keeps its reserve. A process that opens the file later
    makes the reserve again (``_make_reserve``)."""
    if not cache_path.with_name(cache_path.name + "-wal").exists():
        with contextlib.suppress(OSError):
            reserve_path(cache_path).unlink(missing_ok=True)


def _disk_full(exc: BaseException) -> bool:
    """SQLite reports a file that cannot grow as SQLITE_FULL, or (a WAL or shared-memory page it could
    not write) as an I/O error: either may be a full disk, and the reserve is what can tell."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    return name.startswith(("SQLITE_FULL", "SQLITE_IOERR")) or "disk is full" in str(exc) \
        or getattr(exc, "errno", None) == 28


def write_errors_path(cache_path: str | os.PathLike[str]) -> Path:
    """Where failed cache writes are noted: ``<cache file>.write-errors`` (one line per process)."""
    p = Path(cache_path)
    return p.with_name(p.name + ".write-errors")


def cache_write_errors(cache_path: str | os.PathLike[str], since: float) -> list[str]:
    """The cache write failures noted since ``since`` (a ``time.time()``), one message per process.

    For the CLI: a run whose answers could not be cached must exit non-zero, even if every table
    was written, because a re-run would pay for those answers again.
    """
    try:
        lines = write_errors_path(cache_path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        stamp, _, rest = line.partition("\t")
        try:
            if float(stamp) >= since:
                out.append(rest.partition("\t")[2])
        except ValueError:
            continue
    return out


def cache_key(model: ModelConfig, messages: Sequence[Mapping[str, Any]], contract: str, contract_version: str,
              sample_index: int, attempt: int, *, wire: WireText | None = None,
              constraint: Mapping[str, Any] | None = None) -> str:
    """sha256 of everything that can change an output, and nothing that cannot.

    ``attempt`` is the re-ask index (0 = first ask); retries after errors reuse the same key
    because an error is never stored.

    The hashed bytes are ``canonical_json`` of ``{"model": model.identity(), "messages": [{"role",
    "content"}...], "contract", "contract_version", "sample_index", "attempt"}``, written out here
    key by key (sorted) so each message content is escaped once (``wire``: the same messages'
    ``WireText``, shared with the request body) and by the faster encoder where that is equal;
    the key values are those of the plain ``canonical_json`` form (tests compare both).
    ``constraint``: the body fields that shaped the output (``constraints.constraint_for``), hashed
    as a ``"constraint"`` entry only when there is one, so an unconstrained call keeps its old key.
    """
    literals = (wire if wire is not None else WireText(messages)).literals()
    h = hashlib.sha256()
    shaped = ',"constraint":' + canonical_json(dict(constraint)) if constraint else ""
    head = ('{"attempt":' + scalar_json(attempt) + shaped + ',"contract":' + scalar_json(contract)
            + ',"contract_version":' + scalar_json(contract_version) + ',"messages":[')
    h.update(head.encode("utf-8"))
    for i, (m, literal) in enumerate(zip(messages, literals, strict=True)):
        role, content = m["role"], m["content"]
        h.update(b',{"content":' if i else b'{"content":')
        for piece in literal if literal is not None else (canonical_json(content).encode("utf-8"),):
            h.update(piece)
        h.update((',"role":' + scalar_json(role) + "}").encode("utf-8"))
    tail = '],"model":' + model.identity_json() + ',"sample_index":' + scalar_json(sample_index) + "}"
    h.update(tail.encode("utf-8"))
    return h.hexdigest()


def request_key(model: ModelConfig, req: CallRequest, *, wire: WireText | None = None) -> str:
    """The key of a request's first ask: what the gateway looks up, a batch pre-fills, a plan checks.

    Remembered on the request (per model identity), so a planner's key is not recomputed by the
    gateway (hashing a 700 KB prompt costs ~1.5 ms); the memo is used only while the request still
    holds the very same message texts it was computed from.
    """
    from .constraints import constraint_for  # noqa: PLC0415 - constraints imports types only

    shape = constraint_for(model, req)[1]
    ident = model.identity_json() + (canonical_json(shape) if shape else "{}")
    texts = tuple(x for m in req.messages for x in (m["role"], m["content"]))
    memo = req._keys.get(ident)
    if (memo is not None and len(memo[0]) == len(texts) and all(a is b for a, b in zip(memo[0], texts))
            and memo[1] == (req.contract, req.contract_version, req.sample_index)):
        return memo[2]
    key = cache_key(model, req.messages, req.contract, req.contract_version, req.sample_index, 0, wire=wire,
                    constraint=shape)
    if len(req._keys) > 8:
        req._keys.clear()
    req._keys[ident] = (texts, (req.contract, req.contract_version, req.sample_index), key)
    return key


def embedding_key(identity: Mapping[str, Any], text: str) -> str:
    """Key of one text's vector under one embedding model (namespace 'embedding')."""
    payload = {"namespace": "embedding", "model": dict(identity), "text": text}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _add_cached_tokens_column(conn: sqlite3.Connection) -> None:
    """Caches written before cached-token accounting lack the column: add it (0 for old rows)."""
    if "cached_prompt_tokens" in {row[1] for row in conn.execute("PRAGMA table_info(calls)")}:
        return
    try:
        conn.execute("ALTER TABLE calls ADD COLUMN cached_prompt_tokens INTEGER NOT NULL DEFAULT 0")
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):  # another process added it first
            raise


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0


class Cache:
    """What the gateway needs from a cache. ``NullCache`` stores nothing; ``SqliteCache`` persists.

    ``lease``/``release`` default to "always yours": a backend shared by processes overrides them.
    """

    path: Path | None = None

    def __init__(self) -> None:
        self.stats = CacheStats()

    def get_answer(self, key: str) -> CachedEntry | None:
        """Like ``get`` but the entry's ``messages`` may be left empty: what the gateway needs on a
        hit (the answer and its cost) without rebuilding the prompt."""
        return self.get(key)

    def lease(self, key: str, ttl_s: float) -> bool:
        """Claim the right to ask for ``key`` for ``ttl_s`` seconds; False while another live owner holds it."""
        return True

    def release(self, key: str) -> None:
        """Give up this owner's lease on ``key`` (the call failed: another process may try)."""
        return None

    def get(self, key: str) -> CachedEntry | None:  # pragma: no cover - interface
        raise NotImplementedError

    def put(self, key: str, entry: CachedEntry) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def put_many(self, items: Sequence[tuple[str, CachedEntry]]) -> None:
        """Store several answers; a backend that can commit them at once overrides this."""
        for key, entry in items:
            self.put(key, entry)

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


class _PriorityLock:
    """A mutex whose ``first()`` holders go before every plain waiter.

    The cache's one connection serves look-ups and leases (many worker threads) and answer writes
    (one writer thread). Under a plain lock a write queued behind a handful of look-ups, each a
    few statements that each give the GIL away and wait to get it back, waited 100-200 ms: long
    enough for a kill to lose answers that had been paid for. A write now waits for at most the
    holder of the moment.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._held = False
        self._urgent = 0

    def acquire(self, timeout: float = -1, *, urgent: bool = False) -> bool:
        with self._cond:
            if urgent:
                self._urgent += 1
            try:
                ok = self._cond.wait_for(lambda: not self._held and (urgent or not self._urgent),
                                         None if timeout < 0 else timeout)
            finally:
                if urgent:
                    self._urgent -= 1
            if ok:
                self._held = True
            elif self._urgent == 0:
                self._cond.notify_all()  # plain waiters held back by this urgent one may go
            return ok

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def __enter__(self) -> "_PriorityLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    @contextlib.contextmanager
    def first(self) -> Iterator[None]:
        self.acquire(urgent=True)
        try:
            yield
        finally:
            self.release()


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
        self._lock = _PriorityLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._owner = ""
        self._known: set[bytes] = set()
        self._write_error_noted = False
        with self._lock:
            self._connection()
        replay(self)  # answers a killed process had received but not committed (answer_journal.py)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
            # A new file gives the pages compaction frees back to the file system (``_compact``);
            # a no-op on an existing file (it keeps its mode; freed pages are reused instead).
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a crash may lose the last commits but never corrupts the file.
            conn.execute("PRAGMA synchronous=NORMAL")
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls'").fetchone() is None:
                self._create(conn)
            conn.executescript(_SCHEMA)  # tables added since an older file was created
            _add_cached_tokens_column(conn)
            self._text_keys = int(conn.execute("PRAGMA user_version").fetchone()[0]) < _LAYOUT
            self._conn, self._pid = conn, os.getpid()
            # One owner per cache object per process: two gateways of one process on one file
            # wait for each other like two processes do.
            self._owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
            self._known = set()
            self._unpacked = 0
            _OPEN.add(self)
            _make_reserve(self.path)  # again after a ``close``, which may have deleted it
        return self._conn

    @staticmethod
    def _create(conn: sqlite3.Connection) -> None:
        """A new file: the tables and the layout number in one transaction (two processes creating
        the same file at once: the second finds the tables and the number)."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            fresh = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls'").fetchone() is None
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            if fresh:
                conn.execute(f"PRAGMA user_version = {_LAYOUT}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Pack what this process left loose (``compact``), checkpoint the write-ahead log into the file,
        then close the connection; the last connection to the file leaves nothing beside it.

        Why: a process that ended with its connection open left the write-ahead log (7 MB beside a 17 MB
        file on 20 paper-shaped personalities), its shared-memory index and the reserve on disk, 2,473
        bytes per call instead of 1,890 (issue 45). Closed here, SQLite checkpoints and deletes ``-wal``
        and ``-shm`` when no other connection has the file open; one still open (the UI's, another run's)
        keeps them, the log truncated to nothing by the checkpoint, and its own reserve (``_drop_reserve``).
        """
        with self._lock:
            self._close()

    def _close(self) -> None:
        """``close`` with the lock held."""
        if self._conn is not None and self._pid == os.getpid():
            if self._unpacked:
                self._compact(self._conn)
            _checkpoint(self._conn)
            self._conn.close()
            _OPEN.discard(self)
            _drop_reserve(self.path)
        self._conn = None

    def compact(self) -> int:
        """Pack every loose prompt chunk of the file now (any process's); returns raw bytes packed."""
        with self._lock:
            return self._compact(self._connection())

    def _compact(self, conn: sqlite3.Connection) -> int:
        """Best effort: a full disk leaves the chunks loose (still complete and readable), not an error."""
        try:
            done = compact(conn)
            self._unpacked = 0
            conn.executescript("PRAGMA incremental_vacuum;")  # execute() would free one page per call
            return done
        except sqlite3.Error:
            return 0

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for process pools: the child opens its own connection.
        return {"path": self.path, "busy_timeout_ms": self._busy_timeout_ms}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], busy_timeout_ms=state["busy_timeout_ms"])  # type: ignore[misc]

    def get(self, key: str) -> CachedEntry | None:
        return self._get(key, with_messages=True)


    def get_answer(self, key: str) -> CachedEntry | None:
        return self._get(key, with_messages=False)

    def _get(self, key: str, *, with_messages: bool) -> CachedEntry | None:
        with self._lock:
            conn = self._connection()
            sql = ("SELECT raw, messages, model, contract, prompt_tokens, completion_tokens, cost_usd, created, "
                   "cached_prompt_tokens FROM calls WHERE key = ?")
            stored = _stored_key(key)
            row = conn.execute(sql, (stored,)).fetchone()
            if row is None and self._text_keys and stored != key:
                row = conn.execute(sql, (key,)).fetchone()  # written before 32-byte keys
            if row is None:
                self.stats.misses += 1
                return None
            self.stats.hits += 1
            raw, messages, model, contract, pt, ct, cost, created, cached = row
            restored = self._decode(conn, messages) if with_messages else ()
        return CachedEntry(raw=unpack_raw(raw), messages=restored, model=model, contract=contract,
                           prompt_tokens=pt, completion_tokens=ct, cost_usd=cost, created=created,
                           cached_prompt_tokens=int(cached or 0))

    @staticmethod
    def _decode(conn: sqlite3.Connection, messages: str | bytes) -> tuple[dict[str, str], ...]:
        # One read transaction: a compaction in another process cannot move a chunk between lookups.
        conn.execute("BEGIN")
        try:
            return decode_messages(conn, messages)
        finally:
            conn.execute("COMMIT")

    def prompt_of(self, key: str) -> tuple[dict[str, str], ...] | None:
        """The exact messages a cached call sent (rebuilt from its chunks), or None if not cached."""
        entry = self.get(key)
        return None if entry is None else entry.messages

    def put(self, key: str, entry: CachedEntry) -> None:
        """Store once: the first writer wins, so concurrent writers of one key never clash.

        Also ends this owner's lease on ``key``. Raises ``CacheWriteError`` (path and real cause)
        when the file cannot be written; the transaction is then rolled back if SQLite has not
        already done so, and the rollback never hides the cause.
        """
        self.put_many([(key, entry)])

    def put_many(self, items: Sequence[tuple[str, CachedEntry]]) -> None:
        """``put`` for several answers in ONE transaction (all stored, or none and ``CacheWriteError``).

        Why: answers arrive in bursts (a slot's worth at once) and each commit of a lone ``put`` costs
        several GIL hand-offs while planner threads compute; one commit per burst makes the burst
        durable in the time of one (llm/answer_writer.py). Writers also go before waiting readers
        and leases (``_PriorityLock``): a paid answer waiting behind look-ups is an answer a kill loses.
        """
        if not items:
            return
        with self._lock.first():
            conn = self._connection()
            encoded = []
            for key, entry in items:
                refs, chunks = encode_messages(entry.messages, self._known)
                encoded.append((key, entry, refs, chunks))
            if len(self._known) > 200_000:  # a memo of chunks already stored, not a second cache
                self._known.clear()
            error = self._write(conn, lambda: self._insert_rows(conn, self._owner, encoded))
            for *_, chunks in encoded:
                self._known.update(h for h, _ in chunks)
                self._unpacked += sum(len(d) for _, d in chunks)
            self.stats.writes += len(encoded)
            if error is None and self._unpacked >= COMPACT_AFTER:  # on a full disk the space is for answers
                self._compact(conn)
        if error is not None:  # stored, but the disk is full: the caller must stop sending (Gateway.cache_error)
            raise error

    def _write(self, conn: sqlite3.Connection, write) -> CacheWriteError | None:
        """Run ``write`` (one transaction) with the full-disk policy every paid result shares:
        answers (``put_many``), vectors (``put_vectors``) and batch outputs (through ``put_many``).

        A full disk spends the reserve and retries once in its space: then the ``CacheWriteError``
        (``stored=True``) is returned, for the caller to raise after its bookkeeping (nothing more
        may be sent). Otherwise the error is raised. Either way it is noted beside the cache.
        """
        try:
            write()
            return None
        except sqlite3.Error as exc:
            self._rollback(conn)
            stored = _disk_full(exc) and self._spend_reserve()
            if stored:
                try:
                    write()
                except sqlite3.Error:
                    self._rollback(conn)
                    stored = False
            error = CacheWriteError(self.path, exc, stored=stored)
            self._record_write_error(error)
            if not stored:
                raise error from exc
            return error
        except BaseException:
            self._rollback(conn)
            raise

    def _spend_reserve(self) -> bool:
        """Delete the reserve (``RESERVE_BYTES``) so the write can be retried in its space."""
        if self.path is None:
            return False
        try:
            reserve_path(self.path).unlink()
            return True
        except OSError:
            return False  # none (no room when the cache was opened, or another process took it)

    @staticmethod
    def _insert_rows(conn: sqlite3.Connection, owner: str, encoded: list) -> None:
        """One transaction: every row of ``encoded`` (and its new prompt chunks), ``owner``'s leases ended."""
        conn.execute("BEGIN IMMEDIATE")
        for key, entry, refs, chunks in encoded:
            if chunks:
                conn.executemany("INSERT OR IGNORE INTO loose (hash, data) VALUES (?, ?)", chunks)
            conn.execute(
                "INSERT OR IGNORE INTO calls (key, model, contract, raw, messages, prompt_tokens, "
                "completion_tokens, cost_usd, created, cached_prompt_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_stored_key(key), entry.model, entry.contract, pack_raw(entry.raw), refs,
                 int(entry.prompt_tokens), int(entry.completion_tokens), float(entry.cost_usd),
                 entry.created, int(entry.cached_prompt_tokens)))
        conn.executemany("DELETE FROM leases WHERE key = ? AND owner = ?", [(key, owner) for key, *_ in encoded])
        conn.execute("COMMIT")

    def _record_write_error(self, error: CacheWriteError) -> None:
        """Leave a one-line note beside the cache (once per process), so the command that started
        the run learns of the failure even when the write failed in a worker process."""
        if self._write_error_noted or self.path is None:
            return
        try:
            with open(write_errors_path(self.path), "a", encoding="utf-8") as f:
                lost = "" if error.stored else "; the tables hold the answers it could not store, a re-run would pay for them again"
                f.write(f"{time.time():.3f}\t{os.getpid()}\t{error}{lost}\n")
            self._write_error_noted = True
        except OSError:
            pass  # the disk may refuse this too (a later failure tries again); the error is still raised

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        # After a disk-full or I/O error SQLite has often rolled back already; a second ROLLBACK
        # would raise "no transaction is active" over the error that matters.
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    # -- leases: one payer per key across processes ------------------------------------------
    def lease(self, key: str, ttl_s: float) -> bool:
        now = time.time()
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
                row = conn.execute("SELECT owner, host, pid, expires FROM leases WHERE key = ?", (key,)).fetchone()
                if row is not None and row[0] != self._owner and row[3] > now and not _dead(row[1], row[2]):
                    conn.execute("COMMIT")
                    return False
                conn.execute("INSERT OR REPLACE INTO leases (key, owner, host, pid, expires) VALUES (?, ?, ?, ?, ?)",
                             (key, self._owner, _HOST, os.getpid(), now + ttl_s))
                conn.execute("COMMIT")
                return True
            except sqlite3.Error as exc:
                self._rollback(conn)
                # The gateway stops sending now; the answers in flight need the reserve's space, and
                # so does the note that tells the run why.
                error = CacheWriteError(self.path, exc, stored=_disk_full(exc) and self._spend_reserve())
                self._record_write_error(error)
                raise error from exc

    def release(self, key: str) -> None:
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, self._owner))
            except sqlite3.Error:
                pass  # best effort: an unreleased lease expires or is taken over when we are gone

    def lease_holder(self, key: str) -> tuple[str, int] | None:
        """(host, pid) of the live lease on ``key``, for a waiting caller's message."""
        with self._lock:
            row = self._connection().execute("SELECT host, pid FROM leases WHERE key = ?", (key,)).fetchone()
        return None if row is None else (row[0], int(row[1]))

    def storage(self) -> dict[str, int]:
        """Rows and bytes per table (SQLite's dbstat when available): for the storage benchmark."""
        with self._lock:
            conn = self._connection()
            out = {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
                   for t in ("calls", "loose", "packed", "packs", "blobs")}
            try:
                for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
                    out[f"bytes:{name}"] = int(size)
            except sqlite3.Error:
                pass
        return out

    def get_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            conn = self._connection()
            for chunk in in_batches(list(keys)):
                marks = ",".join("?" * len(chunk))
                for key, blob in conn.execute(f"SELECT key, vector FROM embeddings WHERE key IN ({marks})", chunk):
                    out[key] = vector_of(blob)
            self.stats.hits += len(out)
            self.stats.misses += len(keys) - len(out)
        return out

    def put_vectors(self, model: str, vectors: Mapping[str, np.ndarray]) -> None:
        now = time.time()
        rows = [(k, model, int(v.shape[0]), vector_blob(v), now) for k, v in vectors.items()]
        with self._lock.first():  # paid vectors go before look-ups, like answers
            conn = self._connection()

            def write() -> None:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR IGNORE INTO embeddings (key, model, dim, vector, created) "
                                 "VALUES (?, ?, ?, ?, ?)", rows)
                conn.execute("COMMIT")

            error = self._write(conn, write)  # a full disk: the reserve, as for answers
            self.stats.writes += len(rows)
        if error is not None:  # stored in the reserve's space: the caller must stop sending
            raise error

    def __len__(self) -> int:
        with self._lock:
            return int(self._connection().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def keys_with_prefix(self, prefix: str) -> list[str]:
        """Keys starting with ``prefix`` (at most a few, for lookups by a shortened key)."""
        found = []
        with self._lock:
            conn = self._connection()
            # Text keys (older files, non-hex keys): SQLite orders every text before every blob.
            found += [r[0] for r in conn.execute(
                "SELECT key FROM calls WHERE key >= ? AND key < ? ORDER BY key LIMIT 5", (prefix, prefix + "\uffff"))]
            if len(prefix) <= 64 and re.fullmatch(r"[0-9a-f]*", prefix):
                low, high = bytes.fromhex((prefix + "0" * 64)[:64]), bytes.fromhex((prefix + "f" * 64)[:64])
                found += [r[0].hex() for r in conn.execute(
                    "SELECT key FROM calls WHERE key >= ? AND key <= ? ORDER BY key LIMIT 5", (low, high))]
        return sorted(set(found))[:5]

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(_key_text(r[0]) for r in self._connection().execute("SELECT key FROM calls"))


_OPEN: "weakref.WeakSet[SqliteCache]" = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    """A process that ends normally closes the caches it left open (``close``: the chunks packed, the
    write-ahead log checkpointed, no ``-wal``, ``-shm`` or reserve left when it was the last). The
    runner, ``interviewsim run``'s worker and a Dagster step process keep their process's gateway
    (``factories.process_gateway``) to the end; a killed process leaves the files, and the next process
    to close the cache cleans up."""
    for cache in list(_OPEN):
        if cache._conn is None or cache._pid != os.getpid():
            continue
        if cache._lock.acquire(timeout=5):  # a daemon thread stopped mid-write may hold it: then skip
            try:
                cache._close()
            finally:
                cache._lock.release()


VECTOR_BATCH = 500
"""Keys per embedding look-up statement (every backend): a bounded parameter list."""


def in_batches(items: list[Any], n: int = VECTOR_BATCH) -> Iterable[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def vector_blob(vector: np.ndarray) -> bytes:
    """How every cache backend stores an embedding: float32, native byte order."""
    return np.asarray(vector, dtype=np.float32).tobytes()


def vector_of(blob: bytes) -> np.ndarray:
    """An embedding back from ``vector_blob`` (a writable copy, not a view of the driver's buffer)."""
    return np.frombuffer(bytes(blob), dtype=np.float32).copy()
