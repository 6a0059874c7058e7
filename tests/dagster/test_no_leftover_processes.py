"""No process of ``interviewsim run`` outlives it, and its step logs are still captured (issue 33).

Dagster's default local compute-log capture started ``tail -F`` processes that stayed after the
command exited, holding its stdout/stderr: a caller reading them (``| tee``, ``communicate()``)
hung. The run here is started in a session of its own and waited for by pid (``run_cli``), then
every process of that session still alive is listed: there must be none. The capture itself must
still work: the step's stdout/stderr files are under ``DAGSTER_HOME`` (what the UI's run page shows).
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from dg_helpers import PEOPLE, write_person
from ui_harness import run_cli

from interviewsim_dagster.compute_logs import ThreadComputeLogManager


def test_interviewsim_run_leaves_no_process_of_its_session(tmp_path):
    write_person(tmp_path / "corpus", PEOPLE[0])
    # A `tail` first on PATH that records each start and then is the real one: Dagster's default capture
    # started two per step; whether they outlive the command depends on timing, their start does not.
    shim, starts = tmp_path / "bin", tmp_path / "tail_starts.txt"
    shim.mkdir()
    real_tail = shutil.which("tail")
    (shim / "tail").write_text(f'#!/bin/sh\necho "$@" >> {starts}\nexec {real_tail} "$@"\n')
    (shim / "tail").chmod(0o755)
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"}
    env = {k: v for k, v in env.items() if not k.startswith("INTERVIEWSIM_")}
    result = run_cli(["run", "--corpus", str(tmp_path / "corpus"), "--data-root", str(tmp_path / "data"),
                      "--methods", "simple", "--generator", "offline/extractive", "--judges", "offline/extractive",
                      "--builder", "offline/extractive", "--premise-judge", "offline/extractive",
                      "--assets", "heldout_split,generations"], env=env, cwd=tmp_path, timeout_s=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.left == [], f"processes of `interviewsim run` outlived it: {result.left}"
    assert not starts.exists(), f"step log capture started tail processes: {starts.read_text()}"
    logs = list((tmp_path / "home" / "storage").glob("*/compute_logs/*.complete"))
    assert logs, "no step's output was captured (the run page would have no logs)"


def test_a_step_s_output_reaches_its_log_file_and_the_terminal_without_a_process(tmp_path, capfd):
    manager = ThreadComputeLogManager(base_dir=str(tmp_path))
    before = set(_children())
    with manager.capture_logs(["run", "compute_logs", "step"]):
        os.write(1, b"to stdout\n")
        os.write(2, b"to stderr\n")
        assert set(_children()) == before, "capture started a process"
    out, err = capfd.readouterr()
    assert (out, err) == ("to stdout\n", "to stderr\n")
    assert manager.get_log_data(["run", "compute_logs", "step"]).stdout == b"to stdout\n"
    assert manager.get_log_data(["run", "compute_logs", "step"]).stderr == b"to stderr\n"
    assert manager.is_capture_complete(["run", "compute_logs", "step"])


def test_a_second_step_capturing_at_once_in_the_same_process_says_where_its_output_went(tmp_path):
    manager = ThreadComputeLogManager(base_dir=str(tmp_path))
    inside, release = threading.Event(), threading.Event()

    def first() -> None:
        with manager.capture_logs(["a"]):
            inside.set()
            release.wait(30)

    t = threading.Thread(target=first)
    t.start()
    try:
        assert inside.wait(30)
        with manager.capture_logs(["b"]):
            pass
    finally:
        release.set()
        t.join(30)
    assert b"another step of the same process was capturing" in manager.get_log_data(["b"]).stdout
    assert manager.is_capture_complete(["a"]) and manager.is_capture_complete(["b"])


def _children() -> list[int]:
    me = str(os.getpid())
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] == me:
                out.append(int(stat.parent.name))
        except OSError:
            continue
    return out
