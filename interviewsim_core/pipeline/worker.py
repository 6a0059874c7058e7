"""The process side of ``interviewsim run``'s worker: the direct runner's scheduler (``runner.run_steps``)
in a process of its own, telling the command each partition it writes.

The command's side (``interviewsim_dagster.action_worker``) starts this process with ``spawn`` and
records what it reports in Dagster runs. This side never imports Dagster: the process only makes
calls and writes partitions, as the direct runner does, and the 0.6 s and the memory of importing
Dagster were spent before its first call. It is the same scheduler over the same step environment
as ``run_evaluation`` (the default one of ``run_steps``), so a partition is the same whichever made it.

Messages to the command, each a pickled tuple: ``("done", step, cell, Report)`` per partition written,
``("progress", line)`` every ``PROGRESS_EVERY_S`` while calls are made (``progress.progress_line``: partitions
written of the action's total, calls/s, time left; the command prints it), ``("end", why)`` once.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import multiprocessing
import os
import pickle
import queue
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LATE_IMPORTS = ("scipy.special", "scipy.linalg", "scipy.optimize", "scipy.integrate", "scipy.interpolate",
                "scipy.stats", "scipy.cluster.hierarchy", "matplotlib", "matplotlib.figure",
                "interviewsim_core.report.html")
"""What the graph's last steps import when they first run (the leaderboard's and the premise metrics'
intervals: scipy.stats; the premise clusters; the report's page: jinja2 and matplotlib), about 1.3 s in
all. The direct runner imports them after its last call; this process imports them while it waits
for its job, the command still starting Dagster (``_import_while_waiting``), so they are not
imported after the last call. In this order, no module longer than 0.35 s, so a job arriving
meanwhile waits at most that long."""


@dataclass
class Report:
    """What the worker says of one partition it wrote: the step's output, its calls (``runner.PROGRESS_FIELDS``:
    planned, answered, cached, ...; ``None`` for a step that calls no model), which each run sums into its
    steps' totals, and the summary of its table (``table_summary``), which the run recording it turns into
    the partition's metadata (``interviewsim_dagster.recording``).

    A table written to its Parquet file is not sent (``in_file``, ``out`` is ``None``): the run recording it
    reads the file (``runner.read_partition``) only when its metadata needs more than the summary (a step's
    presenter). The worker runs ahead of the recording, and the frames sent through the pipe were held by the
    command until recorded: 5.4 GB and growing at 1,000 small personalities (issue 43). The summary is small
    and computed here from the Arrow table just written: reading the file back, converting it to pandas and
    summarising it there cost the command about 9.5 ms a partition, more than this process spent making it."""

    out: Any
    counts: dict[str, float] | None = None
    in_file: bool = False
    summary: dict[str, Any] | None = None


STOP_GRACE_S = 20.0
"""How long a stopped worker gets to cancel its calls and end, or an exiting one to exit, before it is killed."""

_SPARE: tuple[Any, Any] | None = None
"""``spawn``'s process and the command's end of its pipe, until ``take`` gives them to an action."""
_LOCK = threading.Lock()
"""Guards ``_SPARE`` and ``_EXITING``."""


def spawn() -> None:
    """Start this process's next worker now, so it imports while the command plans (``take`` gives it).

    The worker's imports (pandas, the step table, the gateway) take a second or more; ``interviewsim run``
    calls this before it imports Dagster, registers, plans and narrows its runs, so the first call is
    not delayed by them, and the worker has the rest of that time for ``LATE_IMPORTS``.
    """
    global _SPARE
    with _LOCK:
        if _SPARE is None:
            ctx = multiprocessing.get_context("spawn")  # a fork of the command, holding Dagster's threads, is not safe
            here, there = ctx.Pipe(duplex=True)
            proc = ctx.Process(target=main, name="interviewsim-action-worker", daemon=True, args=(there, os.getpid()))
            proc.start()
            there.close()
            _SPARE = (proc, here)


def take() -> tuple[Any, Any]:
    """(process, connection) of a worker waiting for its job: ``spawn``'s, else a new one."""
    global _SPARE
    spawn()
    with _LOCK:
        spare, _SPARE = _SPARE, None
    assert spare is not None
    return spare


def discard() -> None:
    """Stop a worker ``spawn`` started that no action took (the command ended before its runs)."""
    global _SPARE
    with _LOCK:
        spare, _SPARE = _SPARE, None
    if spare is not None:
        spare[1].close()  # the worker reads end-of-file and exits
        end(spare[0], 5)


def end(proc, grace: float) -> None:
    """Give ``proc`` ``grace`` seconds to exit, then kill it; return once it is gone."""
    proc.join(grace)
    if proc.is_alive():
        proc.kill()
        proc.join(5)


_EXITING: list[Any] = []
"""Workers that ended ``ok`` and are only exiting (their interpreter's teardown, the cache closing at exit:
its chunks packed, its log checkpointed, ``cache._close_at_exit``): ``exiting`` adds one, ``wait_exited``
waits for them."""


def exiting(proc) -> None:
    """``proc`` said it ended ``ok``: the command goes on to its summary while it exits."""
    with _LOCK:
        _EXITING.append(proc)


def wait_exited() -> None:
    """Wait for the workers that ended ``ok`` to exit (killed after ``STOP_GRACE_S``): the command calls this
    last, so no worker outlives it, and their teardown overlapped its summary."""
    with _LOCK:
        procs, _EXITING[:] = list(_EXITING), []
    for proc in procs:
        end(proc, STOP_GRACE_S)


def main(conn, parent: int) -> None:
    """The worker process: wait for one job on ``conn``, make it, report each partition, end."""
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # What every job needs, imported (and the first call's one-time work done) while the command is
    # still planning (``spawn``).
    from ..llm.transport import warm_up
    from . import runner  # noqa: F401

    try:
        # Only a head start: whatever fails here fails again at the first call, which reports it.
        with contextlib.suppress(Exception):
            warm_up()
        _import_while_waiting(conn)
        job = conn.recv()
    except (EOFError, OSError, KeyboardInterrupt):
        return  # ``discard`` (no action took this worker), or Ctrl-C before its job

    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def post() -> None:
        """Send in a thread of its own: while the command's interpreter is busy recording, the pipe can
        fill up, and a blocked send would hold back the calls (it did: the scheduler waited on it)."""
        while (data := outbox.get()) is not None:
            try:
                conn.send_bytes(data)
            except (BrokenPipeError, OSError):
                os._exit(1)  # the command is gone: nobody records what this would make

    poster = threading.Thread(target=post, name="interviewsim-worker-post")
    poster.start()

    def say(*message: Any) -> None:
        outbox.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    try:
        _work(*job, say)
    except KeyboardInterrupt:
        say("end", "interrupted")
    except BaseException as exc:  # noqa: BLE001 - every error ends the worker and is told to the command
        traceback.print_exc()  # to the command's terminal (standard error is shared); the runs get one line
        first = str(exc).splitlines()[0][:500] if str(exc) else "no message"
        say("end", f"{type(exc).__name__}: {first}")
    else:
        say("end", "ok")
    finally:
        outbox.put(None)
        poster.join()
        gc.freeze()  # its heap is freed at exit: no last collection over it (``interviewsim_cli.main``), which the command waits for


def _import_while_waiting(conn) -> None:
    """Import ``LATE_IMPORTS`` one by one until the job is there (or the command has gone)."""
    for name in LATE_IMPORTS:
        if conn.poll():
            return
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _watch_parent(parent: int) -> None:
    """Die with the command (a ``kill -9`` of it leaves no worker paying for calls nobody records)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def _work(cfg_json: str, nodes: dict[str, list[tuple]], files: dict[str, str], personalities: list[str],
          methods: list[str], say: Callable[..., None]) -> None:
    from .config import EvalConfig
    from .runner import PROGRESS_EVERY_S, load_split, run_steps
    from .steps import BY_NAME, Cell
    from .table_summary import summary_of

    cfg = EvalConfig.model_validate_json(cfg_json)
    run = {step: [Cell(*c) for c in cells] for step, cells in nodes.items()}
    gateway = None
    if any(BY_NAME[s].calls_models for s in run):
        from ..factories import process_gateway

        gateway = process_gateway(cfg.effective_cache_path, cfg.cache_url)
    per_node: dict[tuple[str, Cell], dict[str, float]] = {}

    def done(step, cell: Cell, out: Any, inputs, written) -> None:
        mine = per_node.pop((step.name, cell), None)
        in_file = not step.writes_files
        say("done", step.name, tuple(cell), Report(None if in_file else out, mine if step.calls_models else None, in_file,
                                                   summary_of(out, written, step.means)))

    # Only the progress lines go to the command (it prints them): not the scheduler's line per personality
    # done, a thousand lines at the paper's scale.
    run_steps(cfg, run, lambda pid: load_split(files[pid]), personalities, methods,
              gateway=gateway, write=True, on_progress=lambda line: say("progress", line), keep=(),
              on_partition=done, progress_every_s=PROGRESS_EVERY_S if gateway is not None else None,
              node_counts=per_node)
    if gateway is not None and hasattr(gateway, "raise_for_cache_errors"):
        gateway.raise_for_cache_errors()
