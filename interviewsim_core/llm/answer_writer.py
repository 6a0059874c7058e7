"""One thread that makes paid answers durable, in bursts, ahead of everything else on the cache.

Why a thread of its own: the gateway used to write each answer through ``asyncio.to_thread``,
the same small pool that runs every look-up and lease. When a node's calls are submitted, dozens of
look-ups fill that pool, and an answer that had arrived waited for a free worker and then for the
cache lock: 100-300 ms measured (tests/core/pipeline/test_resume_repeats.py), during which a kill
lost answers the provider had been paid for. Here an answer goes straight to a waiting writer, which
takes every answer queued by then and commits them in one transaction (``Cache.put_many``), ahead
of waiting look-ups (the SQLite cache's ``_PriorityLock``).

The gateway still awaits the write before it frees the call's concurrency slot, so no answer is
handed on (or its slot reused) before it is stored.

Before the hand-off, ``submit`` writes the answer to the cache's journal (answer_journal.py) on the
calling thread: the commit here takes milliseconds to tens of milliseconds, the journal one
``os.write``, and a process killed in between leaves the answer in the journal for the next opening
of the cache. The journal is cut back once the commits have caught up with it.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from typing import Sequence

from .answer_journal import AnswerJournal
from .cache import Cache, CachedEntry, CacheWriteError
from .wire import WireText

__all__ = ["AnswerWriter", "MAX_GROUP"]

MAX_GROUP = 256
"""Answers per transaction at most: a burst is one slot's worth; this only bounds a backlog."""

_Item = tuple[str, CachedEntry, "concurrent.futures.Future[None]", bool]
"""key, entry, done, journaled"""


class AnswerWriter:
    """Writes answers to ``cache`` on a daemon thread; ``submit`` returns a future done once stored.

    Re-created after a fork (threads do not survive one). The future raises what the write raised
    (``CacheWriteError`` for a full disk): the caller decides, as it did for a direct ``put``.
    """

    def __init__(self, cache: Cache):
        self.cache = cache
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = -1
        self.journal = AnswerJournal(cache.path) if cache.path is not None else None

    def submit(self, key: str, entry: CachedEntry, wire: WireText | None = None) -> "concurrent.futures.Future[None]":
        """``wire``: the escaped message texts of the request, if the caller has them (journal record)."""
        journaled = self.journal is not None and self.journal.append(key, entry, wire)
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._queue = queue.SimpleQueue()
                self._thread = threading.Thread(target=self._main, args=(self._queue,),
                                                name="interviewsim-cache-writer", daemon=True)
                self._pid = os.getpid()
                self._thread.start()
            self._queue.put((key, entry, done, journaled))
        return done

    def close(self) -> None:
        """End the thread once the answers queued so far are written (a later ``submit`` starts another)."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None or self._pid != os.getpid():
                return
            self._queue.put(None)  # type: ignore[arg-type]
        thread.join(timeout=60)  # before the caller closes the cache under it
        if self.journal is not None and not thread.is_alive():
            self.journal.close()

    def _main(self, q: "queue.SimpleQueue[_Item]") -> None:
        while True:
            first = q.get()
            if first is None:
                return
            group, last = [first], False
            while len(group) < MAX_GROUP:
                try:
                    item = q.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    last = True
                    break
                group.append(item)
            self._write(group)
            if last:
                return

    def _committed(self, group: Sequence[_Item], refused: bool = False) -> None:
        if self.journal is not None:
            self.journal.committed(sum(1 for *_, journaled in group if journaled), refused=refused)

    def _write(self, group: Sequence[_Item]) -> None:
        try:
            self.cache.put_many([(key, entry) for key, entry, *_ in group])
        except CacheWriteError as exc:  # the file refuses writes: every answer of the group shares it
            self._committed(group, refused=not exc.stored)  # refused: the journal keeps them for a re-run
            for _, _, done, _ in group:
                done.set_exception(exc)
            return
        except BaseException as exc:  # noqa: BLE001 - one odd entry must not fail its neighbours
            if len(group) == 1:
                self._committed(group, refused=True)
                group[0][2].set_exception(exc)
                return
            for item in group:
                self._write([item])
            return
        self._committed(group)
        for _, _, done, _ in group:
            done.set_result(None)
