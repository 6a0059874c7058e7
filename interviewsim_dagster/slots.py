"""Pool slots and killed runs: free what a dead process holds, and say when a run waits for a slot.

``interviewsim run`` executes in process (``execute_in_process``), so no run launcher or daemon
watches its runs: a SIGKILLed run stays STARTED forever and keeps its ``llm_<provider>`` pool slot,
and with ``dagster instance concurrency set llm_openai 1`` every later run waits on it, silently.
Dagster's run monitoring (``dagster.yaml``) only covers launched runs. So each run ``interviewsim``
starts carries its host and pid as tags; before the next run starts, ``free_dead_runs`` marks runs
whose process is gone as failed (``report_run_failed``) and frees their slots
(``free_concurrency_slots_for_run``), both public instance APIs. Runs of another host are judged by
Dagster's own monitoring, never by a pid that means nothing here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import dagster as dg

from interviewsim_core.processes import HOST, pid_alive

HOST_TAG = "interviewsim/host"
PID_TAG = "interviewsim/pid"
_UNFINISHED = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.NOT_STARTED,
               dg.DagsterRunStatus.CANCELING]


def owner_tags() -> dict[str, str]:
    """Tags naming the process that executes a run in process, for ``free_dead_runs`` to check later."""
    return {HOST_TAG: HOST, PID_TAG: str(os.getpid())}


def _dead_owner(run: dg.DagsterRun) -> int | None:
    """The pid of the run's executing process when it is gone (this host only), else None."""
    tags = run.tags
    pid = tags.get(PID_TAG, "")
    if tags.get(HOST_TAG) != HOST or not pid.isdigit():
        return None
    if int(pid) == os.getpid() or pid_alive(int(pid)):
        return None
    return int(pid)


def free_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Fail the unfinished runs whose process died, free every slot they (or finished runs) still hold.

    Returns one human line per run dealt with, for the command's output.
    """
    storage = instance.event_log_storage
    lines: list[str] = []
    holders = storage.get_concurrency_run_ids() if storage.supports_global_concurrency_limits else set()
    records = instance.get_run_records(filters=dg.RunsFilter(statuses=_UNFINISHED, tags={HOST_TAG: HOST}))
    candidates = {r.dagster_run.run_id: r.dagster_run for r in records}
    for run_id in holders - candidates.keys():
        run = instance.get_run_by_id(run_id)
        if run is not None:
            candidates[run_id] = run
    for run_id, run in candidates.items():
        if run.status in _UNFINISHED:
            pid = _dead_owner(run)
            if pid is None:
                continue
            instance.report_run_failed(
                run, message=f"The process running it (pid {pid} on {run.tags.get(HOST_TAG)}) is gone, killed or "
                             "crashed: marked failed by `interviewsim run` so its pool slots are freed.")
            what = f"run {run_id[:8]} ({run.job_name}) was left STARTED by process {pid}, which is gone: marked failed"
        else:
            what = f"run {run_id[:8]} ({run.job_name}) ended {run.status.value} but still held pool slots"
        if run_id in holders:
            storage.free_concurrency_slots_for_run(run_id)
            what += "; its pool slots are freed"
        lines.append(what)
    return lines


class SlotWatcher:
    """While runs of this process execute, report steps waiting for a pool slot (and who holds it).

    Dagster records "Step blocked by limit for pool ..." only in the event log; a headless run would
    otherwise sit silent. Polls the instance every ``interval`` seconds from a daemon thread and reports
    each waiting (run, step, pool) once. Five seconds, not two: a poll is several storage queries
    (about 50 ms of the command's CPU under load), and every poll competes with the run's own
    scheduler for the process's one interpreter (issue 21: 3.9 s of a 145 s run at two seconds).
    """

    def __init__(self, instance: dg.DagsterInstance, report: Callable[[str], None], interval: float = 5.0):
        self.instance = instance
        self.report = report
        self.interval = interval
        self._stop = threading.Event()
        self._seen: set[tuple[str, str, str]] = set()
        self._thread = threading.Thread(target=self._loop, name="interviewsim-slot-watcher", daemon=True)

    def __enter__(self) -> SlotWatcher:
        if self.instance.event_log_storage.supports_global_concurrency_limits:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception:  # noqa: BLE001 - a progress message must never break the run
                continue

    def poll(self) -> list[str]:
        """Report (and return) the new waits of this process' runs."""
        storage = self.instance.event_log_storage
        mine = {r.dagster_run.run_id for r in self.instance.get_run_records(
            filters=dg.RunsFilter(statuses=_UNFINISHED, tags=owner_tags()))}
        if not mine:
            return []
        new: list[str] = []
        keys = sorted(storage.get_concurrency_keys())
        for pool, info in storage.get_concurrency_infos(keys).items():
            holders = sorted({s.run_id[:8] for s in info.claimed_slots if s.run_id not in mine})
            for step in info.pending_steps:
                if step.run_id not in mine or step.assigned_timestamp is not None:
                    continue
                key = (step.run_id, step.step_key, pool)
                if key in self._seen:
                    continue
                self._seen.add(key)
                held = f"; held by run(s) {', '.join(holders)}" if holders else ""
                line = (f"      waiting for a slot in pool {pool} (limit {info.slot_count}{held}): step {step.step_key}; "
                        f"`dagster instance concurrency set {pool} N` changes the limit")
                new.append(line)
                self.report(line)
        return new
