"""The one leaderboard computation: common cells per judge, coverage, the threshold flag, the
all-valid second view, and a reason for every empty value. ``method_scores`` rows are built by
``personality_scores`` from item rows, as the pipeline builds them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.metrics.leaderboard import LEADERBOARD_COLUMNS, leaderboard
from interviewsim_core.metrics.registry import METRICS
from interviewsim_core.metrics.scores import personality_scores

PEOPLE = ("p1", "p2", "p3")
QS = [f"q{i}" for i in range(10)]
LEVELS = {t: ["High"] * 3 for t in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")}


def _call(status):
    return {"status": status, "prompt_tokens": 1, "completion_tokens": 1, "cost_usd": 0.0}


def _votes(levels, broken=False, **keys):
    rows = []
    for t, votes in levels.items():
        for i, v in enumerate(votes):
            bad = broken and t == "openness" and i == 0
            rows.append({**keys, "trait": t, "vote_index": i, "rate": None if bad else v,
                         **_call("invalid" if bad else "ok")})
    return rows


def _scores(cs_score, cs_status=lambda pid, method, q: "ok", ps_broken=(), people=PEOPLE,
            mcq_items_status="ok", methods=("A", "B")):
    """method_scores for methods A and B under judge J; ``cs_score(pid, method, q)`` gives each score."""
    out = []
    for pid in people:
        rps = pd.DataFrame(_votes(LEVELS, personality_id=pid, judge="J"))
        items = pd.DataFrame([{"personality_id": pid, "item_id": f"{q}#3", "qa_id": q, "n_options": 3,
                               "status": mcq_items_status}
                              for q in QS])
        for method in methods:
            gens = pd.DataFrame([{"personality_id": pid, "method": method, "qa_id": q, **_call("ok")} for q in QS])
            cs = pd.DataFrame([{"personality_id": pid, "method": method, "judge": "J", "qa_id": q,
                                "score": cs_score(pid, method, q), **_call(cs_status(pid, method, q))} for q in QS])
            cs.loc[cs["status"] != "ok", "score"] = None
            gps = pd.DataFrame(_votes(LEVELS, broken=(pid, method) in ps_broken, personality_id=pid, method=method,
                                      judge="J"))
            ans = pd.DataFrame([{"personality_id": pid, "method": method, "n_options": 3, "item_id": f"{q}#3", "qa_id": q,
                                 "interview_id": "i", "correct": True, "reward": 1.0, **_call("ok")}
                                for q in QS]) if mcq_items_status == "ok" else None
            out.append(personality_scores(pid, method, generations=gens, content_similarity=cs,
                                          generated_personality=gps, reference_personality=rps, mcq_answers=ans,
                                          mcq_items=items, test_qa_ids=QS, judges=["J"],
                                          embedding_model="text-embedding-3-small"))
    return pd.concat(out, ignore_index=True)


def _row(board, method, metric, view="common", judge="J"):
    sel = board[(board.method == method) & (board.metric == metric) & (board.view == view)]
    sel = sel[sel.judge.isna()] if judge is None else sel[sel.judge == judge]
    assert len(sel) == 1
    return sel.iloc[0]


def _score(pid, method, q):
    # A: score = 1 + question index % 5; B: always 3.
    return 1 + int(q[1:]) % 5 if method == "A" else 3


def _b_fails_first_three_of_p1(pid, method, q):
    return "failed" if (pid, method) == ("p1", "B") and q in ("q0", "q1", "q2") else "ok"


def test_methods_are_compared_on_the_cells_all_of_them_have():
    ms = _scores(_score, _b_fails_first_three_of_p1)
    board = leaderboard(ms, coverage_threshold=0.8, n_resamples=200)
    a = _row(board, "A", "cs_mean")
    # p1 restricted to q3..q9 for A too; p2, p3 on all ten questions.
    p1 = np.mean([1 + i % 5 for i in range(3, 10)])
    full = np.mean([1 + i % 5 for i in range(10)])
    assert a.value == pytest.approx((p1 + 2 * full) / 3)
    assert a.cells_used == 27 and a.cells_valid == 30 and a.coverage == 1.0
    b = _row(board, "B", "cs_mean")
    assert b.value == pytest.approx(3.0) and b.cells_used == 27 and b.coverage == pytest.approx(0.9)
    assert b.n_failed == 3 and not b.below_coverage
    # The all-valid view keeps each method on all its own valid cells.
    assert _row(board, "A", "cs_mean", "all_valid").value == pytest.approx(full)
    assert _row(board, "A", "cs_mean", "all_valid").cells_used == 30
    assert set(board["embedding_model"]) == {"text-embedding-3-small"}
    assert list(board.columns) == LEADERBOARD_COLUMNS


def test_a_method_under_the_coverage_threshold_is_flagged_and_never_best():
    # B scores 5 everywhere (numerically best) but lost 3 of 30 judgments: 90% < 95%.
    ms = _scores(lambda pid, m, q: 5 if m == "B" else _score(pid, m, q), _b_fails_first_three_of_p1)
    board = leaderboard(ms, n_resamples=200)
    a, b = _row(board, "A", "cs_mean"), _row(board, "B", "cs_mean")
    assert b.below_coverage and not a.below_coverage
    assert b.value == pytest.approx(5.0) and not b.best and a.best
    assert not _row(board, "B", "cs_mean", "all_valid").best
    # A (the only compared method) keeps every one of its cells: B's failures do not shrink A's set.
    assert a.cells_used == 30
    # Under a lower threshold B is compared, and best.
    assert _row(leaderboard(ms, coverage_threshold=0.5, n_resamples=200), "B", "cs_mean").best


def test_a_personality_whose_ps_is_nan_is_dropped_for_every_method_not_silently_for_one():
    ms = _scores(_score, ps_broken={("p2", "B")})
    assert math.isnan(ms[(ms.personality_id == "p2") & (ms.method == "B")]["ps_alignment"].iloc[0])
    board = leaderboard(ms, coverage_threshold=0.5, n_resamples=200)
    a, b = _row(board, "A", "ps_alignment"), _row(board, "B", "ps_alignment")
    assert a.n_personalities == b.n_personalities == 2 and a.cells_used == 2
    assert b.coverage == pytest.approx(2 / 3) and b.n_invalid == 1
    assert _row(board, "A", "ps_alignment", "all_valid").n_personalities == 3
    # Default threshold: B (2 of 3 personalities) is flagged, A keeps all three.
    strict = leaderboard(ms, n_resamples=200)
    assert _row(strict, "B", "ps_alignment").below_coverage
    assert _row(strict, "A", "ps_alignment").n_personalities == 3


def test_every_empty_value_says_why():
    ms = _scores(_score, lambda pid, m, q: "invalid" if m == "B" else "ok", mcq_items_status="invalid")
    board = leaderboard(ms, n_resamples=200)
    mcq = _row(board, "A", "mcq3_accuracy", judge=None)
    assert math.isnan(mcq.value) and mcq.empty_reason == "0 valid 3-option MCQ items (30 of 30 invalid)"
    assert _row(board, "A", "mcq4_accuracy", judge=None).empty_reason == "no 4-option MCQ items"
    b = _row(board, "B", "cs_mean")
    assert math.isnan(b.value) and b.empty_reason == "0 valid CS judgments (30 of 30 invalid)"
    failed = leaderboard(_scores(_score, lambda pid, m, q: "failed" if m == "B" else "ok"), n_resamples=200)
    assert _row(failed, "B", "cs_mean").empty_reason == "0 valid CS judgments (30 of 30 failed)"
    # A method with no rows for a personality: its cells there are "not run", and they count.
    ms2 = pd.concat([_scores(_score, methods=("A",)), _scores(_score, methods=("B",), people=("p1",))])
    part = leaderboard(ms2, coverage_threshold=0.3, n_resamples=200)
    assert _row(part, "B", "cs_mean").n_not_run == 20 and _row(part, "B", "cs_mean").coverage == pytest.approx(1 / 3)
    # A value is never blank without a reason.
    empty = board[board["value"].isna()]
    assert len(empty) and (empty["empty_reason"] != "").all()
    assert (board.loc[board["value"].notna(), "empty_reason"] == "").all()


def test_leaderboard_is_independent_of_row_order_and_handles_no_scores():
    ms = _scores(_score, _b_fails_first_three_of_p1)
    one = leaderboard(ms, seed=3, n_resamples=300)
    two = leaderboard(ms.sample(frac=1, random_state=4), seed=3, n_resamples=300)
    pd.testing.assert_frame_equal(one, two)
    empty = leaderboard(ms.iloc[0:0])
    assert list(empty.columns) == LEADERBOARD_COLUMNS and empty.empty


def test_every_registered_metric_is_in_every_derived_place():
    tables = pytest.importorskip("interviewsim_core.pipeline.tables")
    from interviewsim_core.report.catalog import METRICS as REPORT_METRICS

    names = [m.name for m in METRICS]
    assert [f for f in tables.SCHEMAS["method_scores"].names if f in names] == names
    assert list(tables.LEADERBOARD_METRICS) == names
    assert REPORT_METRICS is METRICS
    board = leaderboard(_scores(_score), n_resamples=100)
    assert set(board["metric"]) == set(names)
    from interviewsim_core.pipeline.steps import BY_NAME

    # The orchestrator's per-partition means (Dagster metadata) come from the step table.
    assert list(BY_NAME["method_scores"].means) == names


def test_paired_values_use_the_cells_both_methods_have():
    from interviewsim_core.metrics.leaderboard import paired_values
    from interviewsim_core.metrics.registry import metric
    from interviewsim_core.report.paired import compare_methods

    ms = _scores(_score, _b_fails_first_three_of_p1)
    pv = paired_values(ms, metric("cs_mean"), "A", "B").set_index("personality_id")
    assert pv.loc["p1", "cells"] == 7 and pv.loc["p2", "cells"] == 10
    assert pv.loc["p1", "a"] == pytest.approx(np.mean([1 + i % 5 for i in range(3, 10)]))
    row = compare_methods(ms, "A", "B", metrics=["cs_mean"]).iloc[0]
    assert row["cells"] == 27 and row["n"] == 3
    assert row["mean_difference"] == pytest.approx((pv["a"] - pv["b"]).mean())


def test_mcq_cells_without_any_item_say_no_item_was_generated_not_invalid_items():
    """Issue 22: every atomic item invalid, so no MCQ item exists; the cell must not read "12 of 12
    invalid 3-option items"."""
    from interviewsim_core.metrics.leaderboard import leaderboard
    from interviewsim_core.metrics.scores import personality_scores

    qa = [f"q{i}" for i in range(3)]
    atomic = pd.DataFrame({"personality_id": "p", "qa_id": qa, "status": ["invalid", "invalid", "failed"]})
    scores = personality_scores("p", "simple", atomic_items=atomic, mcq_options=(3, 4), test_qa_ids=qa, judges=["J"])
    assert (scores.iloc[0].mcq3_invalid, scores.iloc[0].mcq3_failed, scores.iloc[0].mcq3_no_item) == (0, 0, 3)
    board = leaderboard(scores, n_resamples=50)
    mcq3 = board[(board.metric == "mcq3_accuracy") & (board.view == "common")].iloc[0]
    assert (mcq3.n_invalid, mcq3.n_failed, mcq3.n_no_item) == (0, 0, 3)
    assert "invalid 3-option" not in mcq3.empty_reason and "no " in mcq3.empty_reason, mcq3.empty_reason
    assert "3 of 3 questions without an item" in mcq3.empty_reason, mcq3.empty_reason
