"""The runner's streaming mode: ready nodes go out as soon as their inputs are in, batches may come back
in any order, personalities are admitted a few at a time and released when done, an error stops
what is still in flight."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pandas as pd
import pytest
from fakes import ScriptedGateway

from interviewsim_core.pipeline import runner
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.runner import run_evaluation

PIDS = ["SYN_AUERLUND", "SYN_KAVANEK"]
METHODS = ("simple", "chrono-5")


class ReversingGateway(ScriptedGateway):
    """``submit_many`` like the real gateway, but every batch waiting when the runner blocks is answered
    in REVERSE order of submission (by a thread, as the gateway's loop would), so a node split into
    several batches gets its last batch back first."""

    def __init__(self, fail_after: int | None = None, **kw):
        super().__init__(**kw)
        self.pending: list[tuple[concurrent.futures.Future, list]] = []
        self.submitted: list[concurrent.futures.Future] = []
        self.lock = threading.Lock()
        self.fail_after = fail_after
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def submit_many(self, pairs):
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self.lock:
            self.pending.append((fut, list(pairs)))
            self.submitted.append(fut)
        return fut

    def _serve(self) -> None:
        while not self.stop:
            time.sleep(0.005)
            with self.lock:
                batch, self.pending = self.pending, []
            for fut, pairs in reversed(batch):
                if not fut.set_running_or_notify_cancel():
                    continue
                if self.fail_after is not None and len(self.calls) >= self.fail_after:
                    fut.set_exception(RuntimeError("the provider went away"))
                    self.stop = True
                    return
                fut.set_result(self.run_many(pairs))


def _config(root, **kw) -> EvalConfig:
    return EvalConfig(data_root=root, methods=METHODS, **kw)


def _same_tables(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    assert list(a) == list(b)
    for name in a:
        pd.testing.assert_frame_equal(a[name].reset_index(drop=True), b[name].reset_index(drop=True),
                                      check_dtype=False, obj=name)


def test_streaming_with_batches_back_in_any_order_gives_the_tables_of_waves(tmp_path):
    waves = run_evaluation(_config(tmp_path / "w"), gateway=ScriptedGateway(), personalities=PIDS)
    gw = ReversingGateway()
    streamed = run_evaluation(_config(tmp_path / "s"), gateway=gw, personalities=PIDS)
    gw.stop = True
    assert len(gw.submitted) > 20  # many small batches, not a few waves
    _same_tables(waves, streamed)
    # Same Parquet files too (the partitions are written as each node finishes).
    for f in sorted((tmp_path / "w").rglob("*.parquet")):
        other = tmp_path / "s" / f.relative_to(tmp_path / "w")
        pd.testing.assert_frame_equal(pd.read_parquet(f), pd.read_parquet(other), check_dtype=False)


def test_personalities_are_admitted_when_the_backlog_runs_low_and_released_when_done(tmp_path, monkeypatch):
    """With no backlog allowed, one personality is in progress at a time: loaded, finished, then the next."""
    events: list[str] = []
    real_load = runner.load_document

    def load(path):
        doc = real_load(path)
        events.append(f"load {doc.personality_id}")
        return doc

    monkeypatch.setattr(runner, "load_document", load)
    monkeypatch.setattr(runner, "BACKLOG_PER_SLOT", 0)
    gw = ReversingGateway()
    out = run_evaluation(_config(tmp_path), gateway=gw, personalities=PIDS, keep=("leaderboard",),
                         progress=lambda line: events.append(line.split(":")[0] + " done") if "personalities)" in line else None)
    gw.stop = True
    assert events == [f"load {PIDS[0]}", f"{PIDS[0]} done", f"load {PIDS[1]}", f"{PIDS[1]} done"]
    assert list(out) == ["leaderboard"] and len(out["leaderboard"])
    # Every table was still written.
    assert len(list((tmp_path / "generations").rglob("*.parquet"))) == len(PIDS) * len(METHODS)


def test_by_default_several_personalities_overlap(tmp_path, monkeypatch):
    events: list[str] = []
    real_load = runner.load_document
    monkeypatch.setattr(runner, "load_document", lambda p: (events.append("load"), real_load(p))[1])
    gw = ReversingGateway()
    run_evaluation(_config(tmp_path, concurrency=64), gateway=gw, personalities=PIDS, keep=(),
                   progress=lambda line: events.append("done") if "personalities)" in line else None)
    gw.stop = True
    assert events[:2] == ["load", "load"]  # the second started before the first finished


def test_keep_refuses_a_table_the_run_does_not_make(tmp_path):
    from interviewsim_core.errors import ConfigError

    with pytest.raises(ConfigError, match="leaderbord"):
        run_evaluation(_config(tmp_path), gateway=ScriptedGateway(), personalities=PIDS, keep=("leaderbord",))
    assert not (tmp_path / "heldout_split").exists()  # refused before anything ran


def test_an_error_cancels_the_batches_still_in_flight(tmp_path):
    gw = ReversingGateway(fail_after=5)
    with pytest.raises(RuntimeError, match="provider went away"):
        run_evaluation(_config(tmp_path), gateway=gw, personalities=PIDS)
    time.sleep(0.05)
    unanswered = [f for f in gw.submitted if not f.done() or f.cancelled()]
    assert unanswered and all(f.cancelled() for f in unanswered)


def test_a_table_only_the_leaderboard_still_reads_is_read_back_from_its_file_not_held(tmp_path, monkeypatch):
    """Issue 43: once personality_scores has read a method_scores partition, only the leaderboard (unpartitioned)
    still needs it; the runner drops the frame and the leaderboard reads the written file back, so memory does not
    grow with the population. It reads them in one joined read (``storage.read_joined``: thousands of small
    partitions held apart cost far more than their rows). The leaderboard is the same as a run that writes nothing
    (frames held throughout)."""
    read_back: list[list[str]] = []
    real = runner.read_joined
    monkeypatch.setattr(runner, "read_joined",
                        lambda paths, *a: (read_back.append([p.parent.parent.name for p in paths]), real(paths, *a))[1])
    written = run_evaluation(_config(tmp_path / "w"), gateway=ScriptedGateway(), personalities=PIDS, keep=("leaderboard",))
    assert read_back == [["method_scores"] * (len(PIDS) * len(METHODS))]
    read_back.clear()
    held = run_evaluation(_config(tmp_path / "m"), gateway=ScriptedGateway(), personalities=PIDS, keep=("leaderboard",),
                          write=False)
    assert read_back == [] and not (tmp_path / "m" / "method_scores").exists()
    _same_tables(written, held)


def test_a_run_over_the_written_partitions_reads_an_all_input_joined_and_skips_the_absent(tmp_path):
    """A run that only makes the leaderboard (Dagster's global stage) reads every method_scores partition from the
    data root as one joined table, in partition order, leaving out a method not run for a person (the input allows
    missing partitions); the recording's ``stored_inputs`` reads the same table. The leaderboard equals the one
    built from those rows held in memory."""
    from interviewsim_core.pipeline.runner import cells_of, run_steps, stored_inputs
    from interviewsim_core.pipeline.scoring import build_leaderboard
    from interviewsim_core.pipeline.steps import BY_NAME, Cell
    from interviewsim_core.pipeline.storage import partition_path
    from interviewsim_core.pipeline.tables import concat_table

    cfg = _config(tmp_path)
    full = run_evaluation(cfg, gateway=ScriptedGateway(), personalities=PIDS, keep=("method_scores",))["method_scores"]
    partition_path(tmp_path, "method_scores", PIDS[1], METHODS[0]).unlink()
    kept = full[~((full["personality_id"] == PIDS[1]) & (full["method"] == METHODS[0]))].reset_index(drop=True)
    board = BY_NAME["leaderboard"]
    inputs = stored_inputs(cfg, board, Cell(), PIDS, list(METHODS))
    pd.testing.assert_frame_equal(inputs["method_scores"], kept, check_dtype=False)
    made = run_steps(cfg, {"leaderboard": cells_of(board, PIDS, list(METHODS))}, lambda pid: None, PIDS,
                     list(METHODS), write=False)
    expected = build_leaderboard(concat_table("method_scores", [kept]), seed=cfg.seed,
                                 coverage_threshold=cfg.coverage_threshold, methods_order=cfg.methods)
    pd.testing.assert_frame_equal(made["leaderboard"], expected, check_dtype=False)


def test_a_required_all_input_partition_that_is_absent_is_named():
    """An ALL input that does not allow missing partitions names the first absent one (``stored_inputs``)."""
    import dataclasses

    from interviewsim_core.pipeline.runner import stored_inputs
    from interviewsim_core.pipeline.steps import BY_NAME, Cell

    board = BY_NAME["leaderboard"]
    strict = dataclasses.replace(board, inputs=tuple(dataclasses.replace(i, allow_missing=False) for i in board.inputs))
    with pytest.raises(FileNotFoundError, match=f"method_scores.*{PIDS[0]}"):
        stored_inputs(_config("/nonexistent-data-root"), strict, Cell(), PIDS, list(METHODS))
