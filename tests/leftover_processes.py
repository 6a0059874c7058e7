"""A pytest plugin: the test session fails, naming them, if it leaves any process behind (issue 33).

``make test`` from a fresh clone must leave nothing running. Tests start servers, ``interviewsim ui``
and ``interviewsim run`` in sessions of their own (so they can be stopped by group), and what those
start can outlive them: Dagster's ``tail -F`` compute-log copiers did, 130 of them. So a process
left behind is found three ways, since it may have been re-parented and moved to another session:

- a descendant of this pytest process, still below it (but Python's own ``multiprocessing`` resource
  tracker, which ends when pytest does);
- a process whose environment carries ``MARKER=<pytest's pid>``, set here at the session's start and
  inherited by everything the tests start, whatever session or parent it ends up in (a test that
  builds an environment from scratch drops it; such a test must stop its processes itself).

Not "every process of pytest's session": other work started from the same shell shares it.

At the session's end, after a short grace for processes still exiting, the leftovers are printed
(pid and command line), killed (they are the session's own), and the session's exit status made
"tests failed". Registered from ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

MARKER = "PYTEST_LEFTOVER_GUARD_PID"
"""Not ``INTERVIEWSIM_...``: the tests drop that prefix from the environments they build."""
GRACE_S = 10.0


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    sid: int
    command: str


def processes() -> dict[int, Proc]:
    """Every living process (zombies left out: they hold nothing and vanish with their parent)."""
    out = {}
    for p in psutil.process_iter(["ppid", "status", "cmdline"]):
        if p.info["status"] in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            continue
        try:
            sid = os.getsid(p.pid)
        except OSError:  # ended since the listing
            continue
        out[p.pid] = Proc(p.pid, p.info["ppid"], sid, " ".join(p.info["cmdline"] or [])[:300] or "?")
    return out


def _has_marker(pid: int, value: str) -> bool:
    try:
        return psutil.Process(pid).environ().get(MARKER) == value
    except (psutil.Error, OSError):
        return False


def leftovers(root: int) -> list[Proc]:
    """Processes that ``root`` (a pytest process) or anything it started left running, ``root`` excluded."""
    procs = processes()
    below, frontier = set(), {root}
    while frontier:
        frontier = {p.pid for p in procs.values() if p.ppid in frontier} - below
        below |= frontier
    found = [p for p in procs.values() if p.pid != root and (p.pid in below or _has_marker(p.pid, str(root)))]
    return sorted((p for p in found if not _interpreter_helper(p)), key=lambda p: p.pid)


def _interpreter_helper(p: Proc) -> bool:
    """Python's ``multiprocessing`` resource tracker of this pytest process: it ends when pytest does."""
    return p.ppid == os.getpid() and "multiprocessing.resource_tracker" in p.command


def pytest_configure(config: pytest.Config) -> None:
    if not Path("/proc").is_dir():
        return
    os.environ[MARKER] = str(os.getpid())


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not Path("/proc").is_dir() or os.environ.get(MARKER) != str(os.getpid()):
        return
    deadline = time.monotonic() + GRACE_S
    left = leftovers(os.getpid())
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = leftovers(os.getpid())
    if not left:
        return
    lines = [f"  pid {p.pid} (parent {p.ppid}, session {p.sid}): {p.command}" for p in left]
    for p in left:
        try:
            os.kill(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    message = (f"\nLEFTOVER PROCESSES: the test session left {len(left)} process(es) running "
               "(killed now; the session fails):\n" + "\n".join(lines) + "\n")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(message, red=True, bold=True)
    else:
        print(message)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
