"""Partitions handed from one run to another run of the same process while both are running.

Dagster runs one partitions definition per op, so an evaluation is several runs (the stages of
``interviewsim_dagster/factory.py``): per personality, per personality x method, per personality
again, then the global tables. Run one after the other, each stage waits for the whole previous
stage: the judges of the first personality wait for the premise judge of the last one, and the
provider idles while a stage drains its last calls (issue 21 measured the product path at 0.81 of
the direct runner that way).

A ``Handoff`` lets the runs of one user action overlap instead. Each run **promises** the
partitions it will make before the next run starts; a later run that reads a promised partition
waits for it like one of its own nodes (``runner._Graph``), and is handed the table the moment the
producing run has written it. So the runs stream as one scheduler would, through the one process
gateway and its concurrency bounds, while each run still records exactly its own partitions as its
own materialisations.

Only runs of one process share a handoff (``interviewsim run``): a partition read by a run that
was not promised is read from the data root, as before. A producer that ends without making a
promised partition (it failed, was refused or interrupted) breaks that promise, and the readers
waiting on it fail with ``BrokenPromise`` naming the run, instead of waiting for ever.
"""

from __future__ import annotations

import concurrent.futures
import threading
import uuid
from collections.abc import Hashable, Iterable
from typing import Any

Node = tuple[str, Hashable]
"""(step name, cell): one partition of one step."""


class BrokenPromise(RuntimeError):
    """A promised partition will not be made: its run ended without it."""


class Handoff:
    """The promised partitions of the runs of one user action, and their futures."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name or uuid.uuid4().hex[:12]
        self._lock = threading.Lock()
        self._futures: dict[Node, concurrent.futures.Future] = {}
        self._producer: dict[Node, str] = {}
        self._promised: dict[str, threading.Event] = {}
        self.interrupted = threading.Event()
        """Set by the launcher on Ctrl-C: every run of the handoff stops at its next step."""

    def promise(self, producer: str, nodes: Iterable[Node]) -> None:
        """``producer`` (a run id) will make ``nodes``; a node promised twice keeps its first producer."""
        with self._lock:
            for node in nodes:
                if node not in self._futures:
                    self._futures[node] = concurrent.futures.Future()
                    self._producer[node] = producer
        self._event(producer).set()

    def wait_promised(self, producer: str, timeout: float) -> bool:
        """True once ``producer`` has made its promises: the launcher starts the next run then."""
        return self._event(producer).wait(timeout)

    def _event(self, producer: str) -> threading.Event:
        with self._lock:
            return self._promised.setdefault(producer, threading.Event())

    def awaited(self, node: Node, reader: str) -> concurrent.futures.Future | None:
        """The future of ``node`` when another run than ``reader`` promised it, else ``None``."""
        with self._lock:
            fut = self._futures.get(node)
            return fut if fut is not None and self._producer[node] != reader else None

    def deliver(self, node: Node, table: Any) -> None:
        """``node`` is written: hand its table to the runs waiting on it."""
        with self._lock:
            fut = self._futures.get(node)
        if fut is not None and not fut.done():
            fut.set_result(table)

    def settle(self, producer: str, why: str) -> int:
        """``producer`` has ended: break every promise of it still open (``why`` says how it ended)."""
        with self._lock:
            open_ = [(n, f) for n, f in self._futures.items() if self._producer[n] == producer and not f.done()]
        for node, fut in open_:
            fut.set_exception(BrokenPromise(f"{node[0]} {_where(node[1])} was to be made by run {producer}, "
                                            f"which ended without it ({why})"))
        return len(open_)


def _where(cell: Any) -> str:
    return "/".join(v for v in cell if v) if isinstance(cell, tuple) else str(cell)


_ACTIVE: dict[str, Handoff] = {}
_ACTIVE_LOCK = threading.Lock()


def register(handoff: Handoff) -> None:
    """Make ``handoff`` findable by name (a run carries the name as a tag)."""
    with _ACTIVE_LOCK:
        _ACTIVE[handoff.name] = handoff


def unregister(handoff: Handoff) -> None:
    with _ACTIVE_LOCK:
        _ACTIVE.pop(handoff.name, None)


def find(name: str | None) -> Handoff | None:
    """The handoff of this process called ``name``: ``None`` in another process (a UI run)."""
    if not name:
        return None
    with _ACTIVE_LOCK:
        return _ACTIVE.get(name)
