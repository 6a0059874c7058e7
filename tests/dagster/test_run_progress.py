"""`interviewsim run` prints its worker's progress (issue 43): the terminal used to say nothing between the runs'
start and their end, hours at the paper's scale. Here its last line, which counts the action's partitions."""

from __future__ import annotations

import re

from typer.testing import CliRunner


def test_run_prints_the_worker_s_progress_line_and_no_line_per_personality(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    for k in ("INTERVIEWSIM_CONFIG", "INTERVIEWSIM_DATA_ROOT", "INTERVIEWSIM_CORPUS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("INTERVIEWSIM_METHODS", "simple")
    result = CliRunner().invoke(app, ["run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    assert "calls: one worker process" in result.output  # the worker's path, whose progress this is
    done = [line for line in result.output.splitlines() if line.startswith("done: ")]
    assert len(done) == 1 and re.match(r"done: (\d+) of \1 partitions written in [^,]+, [\d.]+ calls/s \(", done[0]), \
        result.output
    assert "personalities)" not in result.output
