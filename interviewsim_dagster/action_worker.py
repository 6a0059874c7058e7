"""The calls of one ``interviewsim run`` in a worker process; the Dagster runs record what it makes.

Why a second process: the client is bound by one Python interpreter, not by the provider (issue 21:
the direct runner spent 234.7 s of CPU in 263.1 s of wall time at 20 personalities). In one process,
Dagster's bookkeeping (an event per asset partition and per check verdict, run creation, metadata)
is paid on the interpreter that also sends the calls: ``interviewsim run`` took 352.4 s of CPU,
0.70 of the direct runner. Here the worker is the direct runner's scheduler (``runner.run_steps``)
over every stage of the action at once, and the stage runs of the command's process wait for their
partitions and record each one as the worker reports it, so the bookkeeping runs on the other core
beside the calls instead of between them.

What stays as Dagster users rely on:

- **one materialisation per asset partition**: the stage runs are the same runs, recording the same
  metadata (computed by the run from the table the worker sends, with its split version) and data versions;
- **the selection and nothing else**: the worker makes exactly the nodes of the narrowed run specs;
- **resumption**: the worker writes each partition atomically and every answer goes to the cache,
  so a killed command (or worker) loses no paid call; the next run re-makes an unrecorded partition
  from the cache;
- **limits**: the worker's gateway bounds calls per model at the configured concurrency, as a run's
  does. Pools bound runs; the command uses the worker only when no other run of the instance is in
  progress (``launch.execute``), so it never runs beside a run its pools would have made it wait for.

The worker is a ``spawn`` process (a fork of a process holding Dagster's threads and SQLite
connections is not safe) running core's side of it, ``interviewsim_core.pipeline.worker``, which never
imports Dagster; it dies with the command (it watches its parent) and stops on Ctrl-C like the direct
runner, cancelling its calls in flight. This module is the command's side: the process, a future per
partition, the order in which the runs record.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import queue
import signal
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from interviewsim_core.pipeline import worker as core_worker
from interviewsim_core.pipeline.steps import Cell
from interviewsim_core.pipeline.worker import Report

WORKER_TAG = "interviewsim/worker"
"""Run tag ``<worker name>/<run token>``: the action worker (in the command's process) that makes this
run's partitions, and the run's name among the action's runs (``ActionWorker.order``)."""
Node = tuple[str, Cell]
"""(step name, cell): one partition of one step."""
class NotMade(RuntimeError):
    """A partition the worker was to make and will not: it ended (failed, was stopped) without it."""


@dataclass
class ActionWorker:
    """The command's side of a worker: its process, and a future per partition it makes, which its
    reports complete."""

    process: Any
    name: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    interrupted: threading.Event = field(default_factory=threading.Event)
    """Set by the launcher on Ctrl-C: every run of the action stops waiting at once (the runs are
    threads of the command's process, which the interrupt itself does not reach)."""
    progress: str = ""
    """The worker's latest progress line (``progress.progress_line``), for the command's terminal
    (``launch._record_side_by_side``) and the stage runs' logs."""
    ended: str = ""
    """How the worker ended, once it has: ``ok``, ``interrupted``, or its error."""
    after: dict[str, list[str]] = field(default_factory=dict)
    """Run token -> the runs of earlier stages whose materialisations must be stored before its own
    (``order``)."""
    _reports: dict[Node, concurrent.futures.Future] = field(default_factory=dict, repr=False)
    _started: dict[str, threading.Event] = field(default_factory=dict, repr=False)
    _recorded: dict[str, threading.Event] = field(default_factory=dict, repr=False)
    _reader: threading.Thread | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def order(self, after: Mapping[str, Sequence[str]]) -> None:
        """Runs side by side record in stage order where they share personalities.

        Dagster reads a materialisation's inputs' data versions when it is stored: a P x M partition
        recorded before its personality's split would read as made from no split, and show stale once
        the split is recorded. So each run stores its materialisations only after the runs it reads
        from (``after``) have stored theirs; the runs are cut in matching blocks of personalities
        (``launch._in_blocks``), so a block waits only for its own personalities' runs.
        """
        self.after = {k: list(v) for k, v in after.items()}
        tokens = {*after, *(t for v in after.values() for t in v)}
        self._recorded = {k: threading.Event() for k in tokens}
        self._started = {k: threading.Event() for k in tokens}

    def started(self, token: str) -> None:
        """``token``'s run has begun its stage body (it holds its pool slot, if any)."""
        if token in self._started:
            self._started[token].set()

    def wait_started(self, token: str, timeout: float) -> bool:
        """True once ``token``'s run has begun: the launcher starts the next run then, so a later run
        never holds a pool slot an earlier one waits for."""
        return self._started[token].wait(timeout)

    def wait_turn(self, token: str, interrupted: Callable[[], bool]) -> None:
        """Return once every run ``token`` comes after has stored its materialisations (or ended)."""
        for earlier in self.after.get(token, ()):
            while not self._recorded[earlier].wait(0.5):
                if interrupted():
                    raise KeyboardInterrupt("interrupted while waiting for an earlier run to record")

    def recorded(self, token: str) -> None:
        """``token``'s run has stored its materialisations, or ended without them."""
        if token in self._recorded:
            self._recorded[token].set()

    def report(self, node: Node) -> concurrent.futures.Future | None:
        """The future of ``node``'s report (``None`` when the worker does not make it)."""
        with self._lock:
            return self._reports.get(node)

    def forget(self, node: Node) -> None:
        """``node`` is recorded: its future is dropped (a report the worker sends again is ignored)."""
        with self._lock:
            self._reports.pop(node, None)

    def _deliver(self, node: Node, report: Report) -> None:
        fut = self.report(node)
        if fut is not None and not fut.done():
            fut.set_result(report)

    def _settle(self, why: str) -> None:
        """The worker has ended: every partition it has not reported will not be made (``why``)."""
        with self._lock:
            open_ = [(n, f) for n, f in self._reports.items() if not f.done()]
        for (step, cell), fut in open_:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # reported meanwhile
                fut.set_exception(NotMade(f"{step} {'/'.join(v for v in cell if v)} was to be made by the "
                                          f"action's worker, which ended without it ({why})"))

    def stop(self) -> None:
        """End the worker (Ctrl-C, or a stage run failed: nothing more is to be paid for), and wait for it.

        A worker that said it ended ``ok`` has made every partition durable and is only exiting (its
        interpreter's teardown, the cache closing at exit: 1.5 s after the last call at 6
        personalities, py-spy): the command is not held for that but goes on to its summary, and
        ``worker.wait_exited`` waits for it before the command exits."""
        proc = self.process
        if self._reader is not None:
            self._reader.join(0.5)  # a worker that has said it ended is only exiting: no interrupt then
        if self.ended == "ok" and (self._reader is None or not self._reader.is_alive()):
            with _ACTIVE_LOCK:
                _ACTIVE.pop(self.name, None)
            core_worker.exiting(proc)
            return
        if proc.is_alive() and not self.ended:
            os.kill(proc.pid, signal.SIGINT)  # it cancels its calls in flight and ends
        core_worker.end(proc, core_worker.STOP_GRACE_S)
        if self._reader is not None:
            self._reader.join(5)
        self._settle(self.ended or "the command stopped it")
        with _ACTIVE_LOCK:
            _ACTIVE.pop(self.name, None)


_ACTIVE: dict[str, ActionWorker] = {}
_ACTIVE_LOCK = threading.Lock()
def run_tag(worker: ActionWorker, token: str) -> dict[str, str]:
    """The tag that makes a run, started in this process, record ``worker``'s partitions as ``token``."""
    return {WORKER_TAG: f"{worker.name}/{token}"}


def find(tag: str | None) -> tuple[ActionWorker | None, str]:
    """The worker of this process a run's ``WORKER_TAG`` names, and the run's token (``None``, "" in
    another process, or for a run that is not an action's)."""
    name, _, token = (tag or "").partition("/")
    with _ACTIVE_LOCK:
        worker = _ACTIVE.get(name)
    return (worker, token) if worker is not None else (None, "")


def start(cfg, nodes: Mapping[str, Sequence[Cell]], files: Mapping[str, str], personalities: Sequence[str],
          methods: Sequence[str]) -> ActionWorker:
    """Give a worker process (``worker.spawn``'s, else a new one) ``nodes`` to make (step name -> cells);
    its reports complete the returned worker's futures (``report``)."""
    proc, conn = core_worker.take()
    plain = {step: [tuple(c) for c in cells] for step, cells in nodes.items() if cells}
    worker = ActionWorker(proc)
    worker._reports = {(step, Cell(*c)): concurrent.futures.Future() for step, cells in plain.items() for c in cells}
    conn.send((cfg.model_dump_json(), plain, dict(files), list(personalities), list(methods)))
    worker._reader = threading.Thread(target=_read, args=(worker, conn), name="interviewsim-worker-reports",
                                      daemon=True)
    worker._reader.start()
    with _ACTIVE_LOCK:
        _ACTIVE[worker.name] = worker
    return worker


def _read(worker: ActionWorker, receive) -> None:
    """Deliver the worker's reports until it ends; then fail every partition it did not report."""
    why = "the worker process ended without a word (killed?)"
    try:
        while True:
            try:
                kind, *rest = receive.recv()
            except (EOFError, OSError):
                break
            if kind == "done":
                step, cell, report = rest
                worker._deliver((step, Cell(*cell)), report)
            elif kind == "progress":
                worker.progress = rest[0]
            elif kind == "end":
                why = rest[0]
                break
    finally:
        worker.ended = why
        worker._settle(f"the action's worker ended: {why}")


def wait_for(worker: ActionWorker, nodes: Sequence[Node], record: Callable[[Node, Report], None],
             log: Callable[[str], None], every_s: float, interrupted: Callable[[], bool] = lambda: False) -> None:
    """Hand each of ``nodes`` to ``record`` as soon as the worker reports it, in the order they finish.

    Raises:
        NotMade: the worker ended without making one of them (its error is in the message).
        KeyboardInterrupt: ``interrupted()`` became true.
    """
    futures: dict[concurrent.futures.Future, Node] = {}
    for node in nodes:
        fut = worker.report(node)
        if fut is None:
            raise NotMade(f"{node[0]} {'/'.join(v for v in node[1] if v)} is not one of the partitions this "
                                "action's worker makes")
        futures[fut] = node
    finished: queue.SimpleQueue[concurrent.futures.Future] = queue.SimpleQueue()
    for fut in futures:  # a queue of finished futures, not ``wait`` over all pending ones each time: O(n)
        fut.add_done_callback(finished.put)
    total = left = len(futures)
    last = time.monotonic()
    while left:
        if interrupted():
            raise KeyboardInterrupt("interrupted while waiting for the action's worker")
        try:
            fut = finished.get(timeout=0.5)
        except queue.Empty:
            fut = None
        if fut is not None:
            left -= 1
            node = futures.pop(fut)
            record(node, fut.result())
            worker.forget(node)  # recorded: nothing holds its report any longer
        if time.monotonic() - last >= every_s:
            last = time.monotonic()
            log(f"{total - left}/{total} partitions of this run written by the action's worker; "
                f"worker: {worker.progress or 'starting'}")
