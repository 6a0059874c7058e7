"""Normalised scores (issue 32) against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from interviewsim_core.metrics.leaderboard import LEADERBOARD_COLUMNS, leaderboard
from interviewsim_core.metrics.normalised import WITHIN_NOISE, normalise, normalised_rows, separated
from interviewsim_core.metrics.statistics import Interval, bootstrap_statistic, interval_note


def scores(values: dict[str, list[float]], judge: str = "j") -> pd.DataFrame:
    """method -> CS per personality (P1, P2, ...), one judge."""
    return pd.DataFrame([{"personality_id": f"P{i + 1}", "method": m, "judge": judge, "cs_mean": v}
                         for m, vs in values.items() for i, v in enumerate(vs)])


def row(frame: pd.DataFrame, method: str, metric: str = "cs_mean") -> pd.Series:
    return frame[(frame["method"] == method) & (frame["metric"] == metric)].iloc[0]


def test_hand_computed_value():
    # floor mean 1.5, ceiling mean 4.5, method mean 3.0: (3 - 1.5) / (4.5 - 1.5) = 0.5
    ms = scores({"reference": [5, 4], "copy-nearest": [1, 2], "memory-3": [3, 3]})
    r = row(normalised_rows(ms, ["memory-3", "reference", "copy-nearest"], floors=("copy-nearest",)), "memory-3")
    assert (r.floor_value, r.ceiling_value, r.normalised, r.n_norm_personalities) == (1.5, 4.5, 0.5, 2)
    assert r.norm_reason == ""
    assert r.norm_ci_low <= 0.5 <= r.norm_ci_high
    ends = normalised_rows(ms, ["reference", "copy-nearest"], floors=("copy-nearest",))
    assert row(ends, "reference").normalised == 1.0 and row(ends, "copy-nearest").normalised == 0.0


def test_a_judge_that_always_answers_5_leaves_it_undefined():
    ms = scores({"reference": [5, 5, 5], "copy-nearest": [5, 5, 5], "simple": [5, 5, 5]})
    r = row(normalised_rows(ms, ["simple"], floors=("copy-nearest",)), "simple")
    assert r.floor_value == 5 and r.ceiling_value == 5
    assert math.isnan(r.normalised) and math.isnan(r.norm_ci_low) and math.isnan(r.norm_ci_high)
    assert r.norm_reason == "undefined: ceiling = floor = 5 (this judge does not separate them)"


def test_a_calibration_not_run_is_named_never_invented():
    ms = scores({"reference": [5, 4], "simple": [2, 3]})
    r = row(normalised_rows(ms, ["simple"], floors=("copy-nearest",)), "simple")
    assert math.isnan(r.normalised) and r.norm_reason == "not run: calibration method(s) copy-nearest not in this run"


def test_normalise_uses_only_personalities_with_all_three():
    f, c, v, lo, hi, n, why = normalise({"P1": 3.0, "P2": 3.0, "P4": 9.0}, {"P1": 1.0, "P2": 2.0, "P3": 0.0},
                                        {"P1": 5.0, "P2": 4.0, "P4": 5.0})
    assert (f, c, v, n, why) == (1.5, 4.5, 0.5, 2, "")


def test_one_personality_gives_no_interval_so_it_is_undefined():
    """Issue 45: one personality cannot tell the ceiling from the floor's noise; both values still shown."""
    f, c, v, lo, hi, n, why = normalise({"P1": 3.0, "P2": 9.0}, {"P1": 1.0, "P3": 0.0}, {"P1": 5.0, "P2": 5.0})
    assert (f, c, n) == (1.0, 5.0, 1) and math.isnan(v) and math.isnan(lo) and math.isnan(hi)
    assert why.startswith(WITHIN_NOISE) and "ceiling 5.000, floor 1.000" in why


def test_ceiling_and_floor_within_noise_leave_it_undefined_with_both_values():
    """Issue 45's trial: a contradiction ratio's floor 0.053 and ceiling 0.051 gave 37.82 [-8.71, 37.82]."""
    ms = pd.DataFrame([{"personality_id": f"P{i}", "method": m, "judge": "j", "contradiction_ratio": v}
                       for m, vs in {"reference": [0.0, 0.1, 0.05, 0.0, 0.157, 0.0],
                                     "copy-nearest": [0.05, 0.05, 0.1, 0.0, 0.06, 0.06],
                                     "simple": [0.0] * 6}.items() for i, v in enumerate(vs)])
    r = row(normalised_rows(ms, ["simple"], floors=("copy-nearest",)), "simple", "contradiction_ratio")
    assert math.isnan(r.normalised) and math.isnan(r.norm_ci_low) and math.isnan(r.norm_ci_high)
    assert r.floor_value > r.ceiling_value  # both shown
    assert r.norm_reason.startswith(WITHIN_NOISE + " (ceiling 5.12% [") and "floor 5.33% [" in r.norm_reason


def test_separated_is_the_non_overlap_of_the_two_intervals():
    assert separated(Interval(1.0, 0.5, 1.5, 5), Interval(3.0, 1.6, 4.0, 5)) == ""
    assert separated(Interval(1.0, 0.5, 1.5, 5), Interval(3.0, 1.5, 4.0, 5)).startswith(WITHIN_NOISE)


def test_interval_note_names_an_estimate_at_its_edge():
    """Issue 45: an interval is never printed with its estimate at an edge without a note."""
    assert interval_note(0.5, 0.25, 0.75) == "" and interval_note(math.nan, math.nan, math.nan) == ""
    assert interval_note(37.82, -8.71, 37.82).startswith("the estimate is at the interval's edge")
    assert interval_note(0.0, 0.0, 0.0).startswith("no spread")


def test_bootstrap_statistic_is_seeded_and_pairs_rows():
    x = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    ratio = lambda r: r[:, 0].mean() / r[:, 1].mean()  # noqa: E731 - constant 0.5 whatever the resample
    ci = bootstrap_statistic(x, ratio, seed=3)
    assert (ci.estimate, ci.low, ci.high, ci.n) == (0.5, 0.5, 0.5, 3)
    a = bootstrap_statistic(x, lambda r: r[:, 0].mean(), seed=1)
    assert a == bootstrap_statistic(x, lambda r: r[:, 0].mean(), seed=1) and a.low < 2 < a.high


def test_leaderboard_carries_it_beside_the_raw_value_and_never_marks_an_anchor_best():
    ms = scores({"reference": [5, 4], "copy-nearest": [1, 2], "memory-3": [3, 3]})
    board = leaderboard(ms, n_resamples=200)
    assert list(board.columns) == LEADERBOARD_COLUMNS
    cs = board[(board["metric"] == "cs_mean") & (board["view"] == "all_valid")].set_index("method")
    assert cs.loc["memory-3", "value"] == 3.0 and cs.loc["memory-3", "normalised"] == 0.5
    assert cs.loc["memory-3", "norm_floor"] == "copy-nearest" and cs.loc["memory-3", "norm_ceiling"] == "reference"
    assert bool(cs.loc["memory-3", "best"]) and not cs.loc[["reference", "copy-nearest"], "best"].any()
    common = board[(board["metric"] == "cs_mean") & (board["view"] == "common")]
    assert common["normalised"].isna().all() and common["norm_reason"].str.contains("all_valid").all()
