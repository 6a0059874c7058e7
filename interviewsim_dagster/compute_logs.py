"""Step log capture that starts no process, so nothing of a run outlives it (issue 33).

Dagster's ``LocalComputeLogManager`` copies a step's stdout/stderr to files by pointing file
descriptors 1 and 2 at them and starting ``tail -F`` (plus a Python watcher) per stream to copy the
file back to the terminal. Those tails are children of whatever process runs the step: when that
process ends without reaching the manager's clean-up (killed, interrupted, or two steps of one
process swapping descriptors under each other), they stay, holding the caller's stdout/stderr. A
caller reading those pipes (``interviewsim run | tee``, a test's ``communicate()``) then never sees
end of file, though the command exited.

``ThreadComputeLogManager`` keeps what the UI shows (each step's stdout/stderr files, read by the
inherited methods exactly as before) and what the terminal shows (the same bytes, copied back by a
thread of the step's own process instead of ``tail``). A thread dies with its process, so no
capture can leave anything behind. File descriptors are process-wide, so only one step of a process
captures at a time: a step that starts while another of the same process is capturing (``interviewsim
run``'s runs side by side) leaves its output on the terminal and its log files say where it went.
``dagster.yaml`` selects this manager.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Generator, Sequence
from contextlib import contextmanager

from dagster import Field, Float, StringSource
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.local_compute_log_manager import IO_TYPE_EXTENSION, LocalComputeLogManager
from dagster._serdes import ConfigurableClassData
from dagster._utils import ensure_file, touch_file

_CAPTURING = threading.Lock()
"""Held while a step of this process has descriptors 1 and 2 pointed at its files."""

ELSEWHERE_NOTE = ("(not captured here: another step of the same process was capturing at the time; this "
                  "step's output went to the process's terminal and into that step's log)\n")


class ThreadComputeLogManager(LocalComputeLogManager):
    """``LocalComputeLogManager`` whose capture copies the files to the terminal with a thread, not ``tail``."""

    def __init__(self, base_dir: str | None = None, polling_timeout: float | None = None,
                 inst_data: ConfigurableClassData | None = None):
        # Dagster's default location for local compute logs: <DAGSTER_HOME>/storage.
        base_dir = base_dir or os.path.join(os.environ.get("DAGSTER_HOME", "."), "storage")
        super().__init__(base_dir, polling_timeout=polling_timeout, inst_data=inst_data)

    @classmethod
    def config_type(cls):
        return {"base_dir": Field(StringSource, is_required=False), "polling_timeout": Field(Float, is_required=False)}

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> "ThreadComputeLogManager":
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def capture_logs(self, log_key: Sequence[str]) -> Generator[CapturedLogContext, None, None]:
        paths = {fd: self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[io])
                 for fd, io in ((1, ComputeIOType.STDOUT), (2, ComputeIOType.STDERR))}
        for path in paths.values():
            ensure_file(path)
        if not _CAPTURING.acquire(blocking=False):
            for path in paths.values():
                with open(path, "a", encoding="utf-8") as f:
                    f.write(ELSEWHERE_NOTE)
            yield CapturedLogContext(log_key)
        else:
            try:
                with _mirrored(paths):
                    yield CapturedLogContext(log_key)
            finally:
                _CAPTURING.release()
        touch_file(self.complete_artifact_path(log_key))  # as Dagster's: tells readers the capture is complete


@contextmanager
def _mirrored(paths: dict[int, str]) -> Generator[None, None, None]:
    """Point each descriptor in ``paths`` at its file; a thread copies what the file gains to the old target."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in paths}
    files = {fd: open(path, "ab", buffering=0) for fd, path in paths.items()}  # noqa: SIM115 - closed below
    stop = threading.Event()
    copiers = [threading.Thread(target=_copy, args=(paths[fd], os.path.getsize(paths[fd]), saved[fd], stop),
                                name=f"compute-log-copy-{fd}", daemon=True) for fd in paths]
    try:
        for fd, f in files.items():
            os.dup2(f.fileno(), fd)
        for t in copiers:
            t.start()
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        for fd in paths:
            os.dup2(saved[fd], fd)
        stop.set()
        for t in copiers:
            t.join()
        for fd in paths:
            os.close(saved[fd])
            files[fd].close()


def _copy(path: str, offset: int, to_fd: int, stop: threading.Event, every_s: float = 0.1) -> None:
    """Write to ``to_fd`` what ``path`` gains past ``offset`` until ``stop``, then the rest once more."""
    with open(path, "rb") as src:
        src.seek(offset)
        while True:
            final = stop.wait(every_s)
            while chunk := src.read(65536):
                _write_all(to_fd, chunk)
            if final:
                return


def _write_all(fd: int, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:  # the terminal went away: the file still has everything
        pass
