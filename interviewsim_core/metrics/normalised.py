"""Normalised scores: where a method stands between a floor and the ceiling, per judge and metric.

``normalised = (method - floor) / (ceiling - floor)``, with the ceiling the ``reference`` method
(the person's own held-out response, judged by the same judge) and the floor ``copy-nearest`` (what
retrieval alone earns) or, when that was not run, ``other-person`` (a fluent answer from the wrong
person). 0 is the floor, 1 the ceiling, whatever the metric's direction (a Contradiction Ratio's
ceiling is the lower number, and the formula still reads "share of the way from floor to ceiling").

Values are macro means over the personalities that have all three (method, floor, ceiling), from
each method's own valid cells per personality (``method_scores``: the ``all_valid`` view). The 95%
interval is a percentile bootstrap over those personalities (``statistics.bootstrap_statistic``):
each resample recomputes the three means and the ratio.

Nothing is invented: when a calibration was not run, has no valid value, or the ceiling equals the
floor (a judge that always answers 5), the normalised value is NaN and ``norm_reason`` says why. Nor is
a ratio of noise: the value is given only where the ceiling and the floor are told apart by their own
95% intervals (``separated``), else it is "undefined: ceiling and floor within noise" with both values
and their intervals in the reason. Why: with a gap inside the noise the ratio divides by almost nothing
(issue 45: a contradiction ratio's floor 0.053 and ceiling 0.051 gave ``37.82 [-8.71, 37.82]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..strategies.calibration import CALIBRATION_METHODS, FLOORS, REFERENCE
from .registry import JUDGED_METRICS, MCQ_METRICS, Metric
from .scores import mcq_rows
from .statistics import Interval, bootstrap_statistic

NORMALISED_FIELDS: tuple[tuple[str, str], ...] = (
    ("norm_floor", "str"), ("floor_value", "float"), ("norm_ceiling", "str"), ("ceiling_value", "float"),
    ("normalised", "float"), ("norm_ci_low", "float"), ("norm_ci_high", "float"),
    ("n_norm_personalities", "int"), ("norm_reason", "str"),
)
"""Leaderboard columns beside the raw value (``all_valid`` rows; the ``common`` rows name why not)."""

EQUAL_TOLERANCE = 1e-12

COMMON_VIEW_NOTE = ("normalised scores are on the all_valid view (each method, the floor and the ceiling on their "
                    "own valid cells), not on the common set")
"""Why the ``common`` view has no normalised score: its ``norm_reason``, and the one line the explorer and
the report show above that view's table instead of a number."""


def _per_person(frame: pd.DataFrame, method: str, m: Metric) -> dict[str, float]:
    sub = frame[frame["method"] == method]
    out = {}
    for pid, v in zip(sub["personality_id"].astype(str), sub[m.name] if m.name in sub else []):
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            out[pid] = float(v)
    return out


WITHIN_NOISE = "undefined: ceiling and floor within noise"
"""How an undefined normalised value starts when the ceiling and the floor are not told apart (``separated``)."""


def separated(floor: Interval, ceiling: Interval, *, percent: bool = False) -> str:
    """The one rule for "a normalised score is defined": "" when the ceiling and the floor differ by more
    than their combined uncertainty, i.e. their 95% intervals (over the same personalities, resampled
    together) do not overlap; else the reason, with both values and intervals, that it is undefined
    (in percent for a ``percent`` metric, as the leaderboard prints its raw values).

    One personality gives no interval, so nothing tells its gap from noise: undefined too.
    """
    def v(x: float) -> str:
        return f"{x * 100:.2f}%" if percent else f"{x:.3f}"

    if floor.n < 2 or math.isnan(floor.low) or math.isnan(ceiling.low):
        return (f"{WITHIN_NOISE} cannot be ruled out: {floor.n} personality gives no interval "
                f"(ceiling {v(ceiling.estimate)}, floor {v(floor.estimate)})")
    if floor.high < ceiling.low or ceiling.high < floor.low:
        return ""
    return (f"{WITHIN_NOISE} (ceiling {v(ceiling.estimate)} [{v(ceiling.low)}, {v(ceiling.high)}], floor "
            f"{v(floor.estimate)} [{v(floor.low)}, {v(floor.high)}]: the 95% intervals overlap)")


def normalise(method_vals: dict[str, float], floor_vals: dict[str, float], ceiling_vals: dict[str, float],
              *, seed: int = 0, n_resamples: int = 2000,
              percent: bool = False) -> tuple[float, float, float, float, float, int, str]:
    """(floor, ceiling, normalised, ci_low, ci_high, n_personalities, reason) over the shared personalities.

    The floor and ceiling are returned even when the value is undefined: the reader sees what they were.
    """
    people = sorted(set(method_vals) & set(floor_vals) & set(ceiling_vals))
    if not people:
        return (math.nan,) * 5 + (0, "no personality has a valid value for the method, the floor and the ceiling")
    x = np.array([[method_vals[p], floor_vals[p], ceiling_vals[p]] for p in people], dtype=np.float64)
    floor, ceiling = float(x[:, 1].mean()), float(x[:, 2].mean())
    if abs(ceiling - floor) <= EQUAL_TOLERANCE:
        return (floor, ceiling, math.nan, math.nan, math.nan, len(people),
                f"undefined: ceiling = floor = {ceiling:g} (this judge does not separate them)")
    # The same seed draws the same resamples for both: the two intervals are over the same personalities.
    noise = separated(*(bootstrap_statistic(x, lambda rows, c=c: float(rows[:, c].mean()), seed=seed,
                                            n_resamples=n_resamples) for c in (1, 2)), percent=percent)
    if noise:
        return floor, ceiling, math.nan, math.nan, math.nan, len(people), noise

    def ratio(rows: np.ndarray) -> float:
        mean = rows.mean(axis=0)
        gap = mean[2] - mean[1]
        return math.nan if abs(gap) <= EQUAL_TOLERANCE else float((mean[0] - mean[1]) / gap)

    ci = bootstrap_statistic(x, ratio, seed=seed, n_resamples=n_resamples)
    return floor, ceiling, ratio(x), ci.low, ci.high, len(people), ""


def normalised_rows(method_scores: pd.DataFrame, methods: Sequence[str], *, floors: Sequence[str] = FLOORS,
                    seed: int = 0, n_resamples: int = 2000) -> pd.DataFrame:
    """Long frame: one row per (method, judge, metric, floor) with the normalised value, its CI and reason.

    ``method_scores``: one row per (personality, method, judge) as the pipeline writes it. MCQ
    metrics are judge-independent (``judge`` None), as in the leaderboard.
    """
    rows = []
    judges = sorted(method_scores["judge"].astype(str).unique()) if not method_scores.empty else []
    groups: list[tuple[Metric, str | None, pd.DataFrame]] = [
        (m, j, method_scores[method_scores["judge"].astype(str) == j]) for m in JUDGED_METRICS for j in judges]
    groups += [(m, None, mcq_rows(method_scores)) for m in MCQ_METRICS]
    present = set(method_scores["method"].astype(str)) if not method_scores.empty else set()
    for m, judge, frame in groups:
        ceiling_vals = _per_person(frame, REFERENCE, m)
        for floor in floors:
            floor_vals = _per_person(frame, floor, m)
            for meth in methods:
                base = {"method": meth, "judge": judge, "metric": m.name, "norm_floor": floor,
                        "norm_ceiling": REFERENCE}
                missing = [c for c in (floor, REFERENCE) if c not in present]
                if missing:
                    rows.append({**base, "floor_value": math.nan, "ceiling_value": math.nan, "normalised": math.nan,
                                 "norm_ci_low": math.nan, "norm_ci_high": math.nan, "n_norm_personalities": 0,
                                 "norm_reason": f"not run: calibration method(s) {', '.join(missing)} not in this run"})
                    continue
                f, c, v, lo, hi, n, why = normalise(_per_person(frame, meth, m), floor_vals, ceiling_vals,
                                                     seed=seed, n_resamples=n_resamples, percent=m.percent)
                if not why and (not floor_vals or not ceiling_vals):
                    why = "no valid value for the floor or the ceiling"
                rows.append({**base, "floor_value": f, "ceiling_value": c, "normalised": v, "norm_ci_low": lo,
                             "norm_ci_high": hi, "n_norm_personalities": n, "norm_reason": why})
    return pd.DataFrame(rows, columns=["method", "judge", "metric", "norm_floor", "floor_value", "norm_ceiling",
                                       "ceiling_value", "normalised", "norm_ci_low", "norm_ci_high",
                                       "n_norm_personalities", "norm_reason"])


def attach(board: pd.DataFrame, method_scores: pd.DataFrame, *, seed: int = 0, n_resamples: int = 2000) -> pd.DataFrame:
    """The leaderboard with ``NORMALISED_FIELDS`` filled: on ``all_valid`` rows, against the first floor
    of ``FLOORS`` that was run (``copy-nearest``, else ``other-person``); ``common`` rows say where it is."""
    out = board.copy()
    for name, kind in NORMALISED_FIELDS:
        out[name] = "" if kind == "str" else 0 if kind == "int" else math.nan
    if board.empty:
        return out
    present = set(method_scores["method"].astype(str))
    floor = next((f for f in FLOORS if f in present), FLOORS[0])
    norm = normalised_rows(method_scores, sorted(set(board["method"].astype(str))), floors=(floor,), seed=seed,
                           n_resamples=n_resamples)
    key = {(r.method, "" if r.judge is None or (isinstance(r.judge, float)) else str(r.judge), r.metric): r
           for r in norm.itertuples(index=False)}
    for i, row in out.iterrows():
        if row["view"] != "all_valid":
            out.at[i, "norm_reason"] = COMMON_VIEW_NOTE
            continue
        j = row["judge"]
        r = key.get((row["method"], "" if j is None or (isinstance(j, float) and math.isnan(j)) else str(j),
                     row["metric"]))
        if r is None:
            continue
        for name, _ in NORMALISED_FIELDS:
            out.at[i, name] = getattr(r, name)
    return out


def is_calibration(method: str) -> bool:
    """A calibration method's row (an anchor, never a contender for best)."""
    return method in CALIBRATION_METHODS
