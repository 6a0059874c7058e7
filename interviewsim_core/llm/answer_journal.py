"""An append-only file beside the cache that makes each answer survive a kill the moment it arrives.

Why: the cache commit (answer_writer.py) happens on another thread, after a hand-off and behind
SQLite's lock; an answer the client had received could wait tens of milliseconds for it (p95 46-76
ms measured, issue 20), and a SIGKILL in that window lost an answer the provider had been paid for.
Here the thread that receives the answer writes it, before anything else, with one ``os.write`` to
a file opened ``O_APPEND``. Once ``os.write`` returns the bytes are the kernel's: a killed process
cannot lose them, so no fsync is made (a power loss or kernel crash can lose the tail of the
journal; the cache's own commit, ``synchronous=NORMAL`` in WAL mode, is what covers that, as before).

One journal per cache object per process (``<cache>.journal-<host>-<pid>-<random>``), locked with
``flock`` while its process lives. Opening a cache (``replay``) takes every journal beside it whose
lock is free (its process is gone), stores its answers in the cache (``INSERT OR IGNORE``: an
answer already committed is not duplicated) and deletes it. While a process runs, its journal is
cut back to empty whenever every answer written to it is committed, so it holds at most the answers
in flight to the cache, not the run.

A record is ``MAGIC``, the payload's length and CRC32, then the payload: JSON of exactly what the
cache row holds (key, raw answer, model, contract, tokens, cost, the messages sent), never an API
key. A record cut short by a full disk or a kill mid-write fails its length or CRC check and is
ignored with everything after it. The messages are written from the literals the request body was
made of (``wire.WireText``), so a 700 KB prompt is not escaped a third time on the receiving thread.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import struct
import threading
import uuid
import weakref
import zlib
from pathlib import Path
from typing import Iterator, Protocol, Sequence

from ..processes import HOST
from .cached_entry import CachedEntry
from .wire import WireText, json_literal

__all__ = ["AnswerJournal", "journal_paths", "read_journal", "replay"]

MAGIC = b"ISJ1"
_HEAD = struct.Struct("<4sII")  # magic, payload length, payload crc32


def journal_paths(cache_path: Path) -> list[Path]:
    return sorted(cache_path.parent.glob(f"{cache_path.name}.journal-*"))


def _record(key: str, entry: CachedEntry, wire: WireText | None) -> bytes:
    messages = entry.messages
    literals = wire.literals() if wire is not None and len(wire.messages) == len(messages) else None
    parts = [b'{"messages":[']
    for i, m in enumerate(messages):
        literal = literals[i] if literals is not None and wire.messages[i]["content"] is m["content"] else None
        parts += [b',{"role":' if i else b'{"role":', json_literal(str(m["role"]))[0], b',"content":',
                  *(literal if literal is not None else json_literal(str(m["content"]))), b"}"]
    head = json.dumps({"key": key, "raw": entry.raw, "model": entry.model, "contract": entry.contract,
                       "prompt_tokens": int(entry.prompt_tokens), "completion_tokens": int(entry.completion_tokens),
                       "cost_usd": float(entry.cost_usd), "created": float(entry.created),
                       "cached_prompt_tokens": int(entry.cached_prompt_tokens)},
                      ensure_ascii=False, separators=(",", ":"))
    parts += [b"],", head[1:].encode("utf-8")]
    payload = b"".join(parts)
    return _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def read_journal(data: bytes) -> Iterator[tuple[str, CachedEntry]]:
    """The whole records of a journal's bytes, in order; stops at the first torn or foreign one."""
    at = 0
    while at + _HEAD.size <= len(data):
        magic, size, crc = _HEAD.unpack_from(data, at)
        payload = data[at + _HEAD.size:at + _HEAD.size + size]
        if magic != MAGIC or len(payload) != size or zlib.crc32(payload) != crc:
            return
        at += _HEAD.size + size
        try:
            d = json.loads(payload)
            entry = CachedEntry(raw=d["raw"], messages=tuple({"role": m["role"], "content": m["content"]}
                                                             for m in d["messages"]),
                                model=d["model"], contract=d["contract"], prompt_tokens=d["prompt_tokens"],
                                completion_tokens=d["completion_tokens"], cost_usd=d["cost_usd"],
                                created=d["created"], cached_prompt_tokens=d["cached_prompt_tokens"])
        except (ValueError, KeyError, TypeError):
            return
        yield d["key"], entry


class AnswerStore(Protocol):
    """What ``replay`` needs of a cache: its file and a way to store answers. Named here, not imported from
    ``cache.py``: the cache calls ``replay`` when it opens, so the journal knows none of its callers."""

    path: Path | None

    def put_many(self, items: Sequence[tuple[str, CachedEntry]]) -> None: ...


def replay(cache: AnswerStore) -> int:
    """Store the answers of the journals left beside ``cache`` by processes that are gone; returns
    how many. Best effort: a journal that cannot be read or stored now stays for the next opening."""
    if cache.path is None:
        return 0
    stored = 0
    for path in journal_paths(cache.path):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue  # taken by another process opening the cache
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process is alive
            with os.fdopen(os.dup(fd), "rb") as f:
                items = list(read_journal(f.read()))
            if items:
                cache.put_many(items)  # raises CacheWriteError on a full disk: the journal stays
                stored += len(items)
            path.unlink(missing_ok=True)
        except Exception:  # noqa: BLE001 - opening the cache must not fail for a journal it cannot store yet
            continue
        finally:
            os.close(fd)
    return stored


class AnswerJournal:
    """This process's journal of one cache file. ``append`` on the receiving thread, ``committed``
    from the writer thread once the cache holds those answers."""

    def __init__(self, cache_path: Path):
        self.cache_path = cache_path
        self._lock = threading.Lock()
        self._fd = -1
        self._pid = -1
        self._path: Path | None = None
        self._size = 0
        self._pending = 0
        self._broken = False
        self._keep = False  # an answer the cache refused is in the journal: never cut it

    def _open(self) -> None:
        if self._fd >= 0 and self._pid == os.getpid():
            return
        # After a fork the inherited descriptor (and its lock) belong to the parent's journal.
        self._fd, self._pid, self._size, self._pending, self._keep = -1, os.getpid(), 0, 0, False
        path = self.cache_path.with_name(
            f"{self.cache_path.name}.journal-{HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd, self._path = fd, path
        _OPEN.add(self)

    def append(self, key: str, entry: CachedEntry, wire: WireText | None = None) -> bool:
        """Write one answer; False (the journal is then off for this process) if the disk refused it."""
        if self._broken:
            return False
        record = _record(key, entry, wire)
        with self._lock:
            try:
                self._open()
                written = os.write(self._fd, record)
                if written != len(record):
                    raise OSError(28, "short write")
            except OSError:
                self._broken = True  # the cache commit still follows; a torn tail is ignored on replay
                if self._fd >= 0 and self._pid == os.getpid():
                    try:
                        os.ftruncate(self._fd, self._size)
                    except OSError:
                        pass
                return False
            self._size += written
            self._pending += 1
            return True

    def committed(self, n: int, *, refused: bool = False) -> None:
        """``n`` journaled answers are in the cache (``refused``: the cache could not store them)."""
        with self._lock:
            if self._pid != os.getpid():
                return
            self._pending -= n
            self._keep = self._keep or refused
            if self._pending <= 0 and not self._keep and self._size:
                try:
                    os.ftruncate(self._fd, 0)  # O_APPEND: the next record goes at offset 0
                    self._size = 0
                except OSError:
                    pass

    def close(self) -> None:
        """Delete the journal if every answer in it is committed (else leave it for ``replay``)."""
        with self._lock:
            if self._fd < 0 or self._pid != os.getpid():
                return
            if self._pending <= 0 and not self._keep and self._path is not None:
                self._path.unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = -1


_OPEN: "weakref.WeakSet[AnswerJournal]" = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    """The runner does not close its gateway: a process that ends normally removes its empty journals
    (one with answers still uncommitted stays, for the next opening of the cache)."""
    for journal in list(_OPEN):
        journal.close()
