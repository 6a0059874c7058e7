"""Two runs of one action streaming into each other (``pipeline/handoff.py``): the runs of
``interviewsim run`` in one process. A run reading a partition another run promised waits for it,
gets it the moment it is written, and fails naming the producer when the producer ends without it."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest
from fakes import ScriptedGateway
from test_streaming import PIDS, ReversingGateway, _config

from interviewsim_core.loader import index_corpus, load_document
from interviewsim_core.pipeline import runner
from interviewsim_core.pipeline.handoff import BrokenPromise, Handoff
from interviewsim_core.pipeline.runner import cells_of, run_evaluation, run_steps
from interviewsim_core.pipeline.steps import Partitioning, steps_for
from interviewsim_core.split import split_personality


def _two_runs(cfg):
    """The steps cut as the Dagster stages cut them: per personality first, everything else second."""
    steps = list(steps_for(cfg))
    first = {s.name: cells_of(s, PIDS, list(cfg.methods)) for s in steps if s.partitioning is Partitioning.PERSONALITY
             and not any(i.step in {t.name for t in steps if t.partitioning is not Partitioning.PERSONALITY}
                         for i in s.inputs)}
    second = {s.name: cells_of(s, PIDS, list(cfg.methods)) for s in steps if s.name not in first}
    return first, second


def _load(cfg):
    files = index_corpus(cfg.corpus)
    return lambda pid: split_personality(load_document(files[pid]))


def _launch(cfg, run, gw, board, producer, out, events):
    def go():
        try:
            out[producer] = run_steps(cfg, run, _load(cfg), PIDS, list(cfg.methods), gateway=gw, keep=(),
                                      handoff=board, producer=producer,
                                      on_partition=lambda step, cell, *_: events.append((producer, step.name, time.monotonic())))
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            out[producer] = exc
        finally:
            board.settle(producer, "its run ended")

    board.promise(producer, [(name, c) for name, cells in run.items() for c in cells])
    th = threading.Thread(target=go)
    th.start()
    return th


def test_the_second_run_starts_on_the_first_ones_partitions_before_it_ends_and_writes_the_same_tables(tmp_path):
    whole = run_evaluation(_config(tmp_path / "one"), gateway=ScriptedGateway(), personalities=PIDS)
    cfg = _config(tmp_path / "two", concurrency=64)
    first, second = _two_runs(cfg)
    assert first and second and "generations" in second and "heldout_split" in first
    board, gw, out, events = Handoff(), ReversingGateway(), {}, []
    threads = [_launch(cfg, first, gw, board, "p", out, events)]
    threads.append(_launch(cfg, second, gw, board, "pxm", out, events))
    for th in threads:
        th.join(120)
    gw.stop = True
    assert not isinstance(out["p"], BaseException) and not isinstance(out["pxm"], BaseException), out
    first_done = max(t for who, _s, t in events if who == "p")
    second_first = min(t for who, _s, t in events if who == "pxm")
    assert second_first < first_done  # streamed: not one stage after the other
    # The two runs wrote exactly the tables of one run.
    for f in sorted((tmp_path / "one").rglob("*.parquet")):
        other = tmp_path / "two" / f.relative_to(tmp_path / "one")
        pd.testing.assert_frame_equal(pd.read_parquet(f), pd.read_parquet(other), check_dtype=False, obj=str(f))
    assert sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.parquet")) == \
        sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*.parquet"))
    assert whole  # the one-run reference made its tables


def test_a_reader_fails_naming_the_producer_when_it_ends_without_the_partition(tmp_path):
    cfg = _config(tmp_path)
    first, second = _two_runs(cfg)
    board = Handoff()
    board.promise("1/4 personality_assets", [(name, c) for name, cells in first.items() for c in cells])
    t0 = time.monotonic()
    threading.Timer(0.3, lambda: board.settle("1/4 personality_assets", "Failure: over budget")).start()
    with pytest.raises(BrokenPromise, match=r"\w+ SYN_\w+ was to be made by run 1/4 personality_assets, "
                                            r"which ended without it \(Failure: over budget\)"):
        run_steps(cfg, second, _load(cfg), PIDS, list(cfg.methods), gateway=ScriptedGateway(), keep=(),
                  handoff=board, producer="2/4 personality_method_assets")
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "generations").exists()  # nothing was made without its inputs


def test_an_interrupt_of_the_action_stops_a_waiting_run(tmp_path):
    cfg = _config(tmp_path)
    _first, second = _two_runs(cfg)
    board = Handoff()
    board.promise("p", [(name, c) for name, cells in _first.items() for c in cells])
    threading.Timer(0.3, board.interrupted.set).start()
    with pytest.raises(KeyboardInterrupt):
        run_steps(cfg, second, _load(cfg), PIDS, list(cfg.methods), gateway=ScriptedGateway(), keep=(),
                  handoff=board, producer="pxm")
    assert runner.HANDOFF_POLL_S <= 1.0
