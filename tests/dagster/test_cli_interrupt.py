"""Ctrl-C on `interviewsim run`, its stage runs side by side with the calls in its worker process (the default)
or stage after stage making their own calls (`--in-process`): every run stops, the command says it was
interrupted and how to resume, and exits with its own code (130); a rerun resumes and finishes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dg_helpers import read_until

from interviewsim_cli.outcome import EXIT_INTERRUPTED

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "interviewsim_core" / "sample_corpus"
CLI = Path(sys.executable).parent / "interviewsim"


def _start(cfg: Path, home: Path, *flags: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERVIEWSIM_")}
    env["DAGSTER_HOME"] = str(home)
    return subprocess.Popen(
        [str(CLI), "run", "--config", str(cfg), "--yes", "--personalities", "SYN_AUERLUND,SYN_KAVANEK",
         "--methods", "simple,chrono-100", *flags],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # A shell without job control starts background commands with SIGINT ignored: undo that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("flags", [(), ("--in-process",)], ids=["worker", "in_process"])
def test_ctrl_c_stops_every_run_says_so_without_a_traceback_and_a_rerun_finishes(tmp_path, flags):
    offline = {"model": "offline/extractive"}
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"corpus": str(SAMPLE), "data_root": str(tmp_path / "data"), "generator": offline,
                                   "builder": offline, "premise_judge": offline, "judges": [offline]}))
    proc = _start(cfg, tmp_path / "home", *flags)
    lines, started, reader = read_until(proc, "personality_method_assets [")
    try:
        assert started.wait(300), "".join(lines)
        time.sleep(3)  # the runs side by side are making partitions now
        proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        assert proc.wait(180) == EXIT_INTERRUPTED, "".join(lines)
        stopped_in = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(10)
    out = "".join(lines)
    assert "interrupted: the partitions that finished are written" in out, out
    # The command's own lines carry no traceback (the stopped runs' step failures are quieted), but
    # Dagster's compute-log mirror of a run (a `tail` of its captured output) may still copy a
    # stopped step's stack to the terminal before the run ends it: seen once in six runs, so a
    # traceback is not asserted absent here.
    assert out.count("interrupted: the partitions that finished are written") == 1, out
    assert stopped_in < 120
    worker = re.search(r"one worker process \(pid (\d+)\)", out)
    assert (worker is not None) == (not flags), out
    if worker is not None:  # the worker cancelled its calls and ended with the command
        assert not Path(f"/proc/{worker.group(1)}").exists() or \
            Path(f"/proc/{worker.group(1)}/stat").read_text().split()[2] == "Z"

    rerun = _start(cfg, tmp_path / "home", *flags)
    out2, _ = rerun.communicate(timeout=900)
    assert rerun.returncode == 0, out2
    assert "summary: " in out2 and "exit code 0" in out2


@pytest.mark.parametrize("where", ["resources", "step"])
def test_a_run_ctrl_c_reached_counts_as_interrupted_wherever_it_came(where):
    """Ctrl-C while an in-process run sets up its resources fails the run itself, not a step (CI, stop 39:
    the command then said "run failed", exit 1, instead of 130): both are an interrupt to the command."""
    import dagster as dg

    from interviewsim_dagster.launch import _interrupted

    @dg.resource
    def slow(_init):
        if where == "resources":
            raise KeyboardInterrupt
        return 1

    @dg.op(required_resource_keys={"slow"})
    def step(_context):
        raise KeyboardInterrupt

    @dg.op
    def fails(_context):
        raise ValueError("a real failure")

    @dg.job(resource_defs={"slow": slow})
    def stopped():
        step()

    @dg.job
    def failing():
        fails()

    interrupted = stopped.execute_in_process(raise_on_error=False)
    failed = failing.execute_in_process(raise_on_error=False)
    assert not interrupted.success and _interrupted(interrupted)
    assert not failed.success and not _interrupted(failed)
