"""The leaderboard, computed once: the Parquet table, the report and the Dagster metadata all show
this frame (the report formats it; nothing recomputes an average or an interval elsewhere).

Two views per (method, judge, metric):

- ``common`` (the headline, the paper's "identical test sets", section 3.1): per judge, each
  personality's value is recomputed over the cells (held-out questions, MCQ items, or the
  personality itself for PS) that every *compared* method has a valid value for; then macro-
  averaged over the personalities where that set is not empty. Compared methods are those whose
  coverage (valid cells / expected cells) reaches the threshold: a method that lost half its
  answers to failures is flagged, shown on the cells it has, and never marked best, instead of
  silently shrinking everyone's test set or winning on an easier one.
- ``all_valid``: each method on all of its own valid cells (the per-personality values of
  ``method_scores``), the numbers a per-method summary would give.

Every empty value carries ``empty_reason`` (no items / all invalid / all failed / not run...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .registry import JUDGED_METRICS, MCQ_METRICS, METRICS, Family, Metric, cells_column, count_column, items_column
from .normalised import NORMALISED_FIELDS, attach, is_calibration
from .scores import CI_N_RESAMPLES, macro_interval, mcq_rows

__all__ = [
    "DEFAULT_COVERAGE_THRESHOLD",
    "LEADERBOARD_FIELDS",
    "LEADERBOARD_COLUMNS",
    "VIEWS",
    "leaderboard",
    "mark_best",
    "empty_reason",
    "paired_values",
]

DEFAULT_COVERAGE_THRESHOLD = 0.95
VIEWS = ("common", "all_valid")

LEADERBOARD_FIELDS: tuple[tuple[str, str], ...] = (
    ("method", "str"), ("judge", "str"), ("metric", "str"), ("view", "str"),
    ("value", "float"), ("ci_low", "float"), ("ci_high", "float"),
    ("n_personalities", "int"), ("personalities_expected", "int"),
    ("cells_used", "int"), ("cells_valid", "int"), ("cells_expected", "int"), ("coverage", "float"),
    ("below_coverage", "bool"), ("best", "bool"),
    ("n_invalid", "int"), ("n_failed", "int"), ("n_not_run", "int"), ("n_malformed", "int"),
    ("n_no_item", "int"), ("empty_reason", "str"), ("embedding_model", "str"),
    *NORMALISED_FIELDS,
)  # fmt: skip
"""Columns of the ``leaderboard`` table (one row per method, judge, metric and view; ``judge`` is
null for the judge-independent MCQ metrics)."""

LEADERBOARD_COLUMNS: list[str] = [n for n, _ in LEADERBOARD_FIELDS]


NO_ITEM = "without an item (their atomic item invalid or failed)"
"""How an MCQ cell with no item of its own is named: no MCQ item was generated, so none was invalid."""


def empty_reason(fam: Family, expected: int, n: int, invalid: int, failed: int, not_run: int,
                 noun: str | None = None, no_item: int = 0) -> str:
    """Why a metric has no value, from its family's counts ("" when it has one)."""
    noun = noun or fam.noun
    if expected == 0:
        return f"no {noun}"
    if n > 0:
        return ""
    if no_item == expected:
        return f"no {noun} were generated ({no_item} of {expected} questions {NO_ITEM})"
    for count, word in ((invalid, "invalid"), (failed, "failed")):
        if count == expected:
            return f"0 valid {noun} ({count} of {expected} {word})"
    if not_run == expected:
        return f"not run (0 of {expected} {noun})"
    parts = [f"{c} {w}" for c, w in ((invalid, "invalid"), (failed, "failed"), (no_item, NO_ITEM),
                                      (not_run, "not run")) if c]
    return f"0 valid {noun} of {expected}: " + ", ".join(parts)


def _is_nan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _cell_values(row: pd.Series, m: Metric) -> dict[str, float]:
    """A method's valid cells for one personality and their values under metric ``m``.

    Rows without per-cell lists (``method_scores`` written before the lists existed, or built by
    hand) count as one cell, the personality, holding the per-personality value.
    """
    fam = m.family
    cells = row.get(cells_column(fam)) if fam.cell != "personality" else None
    vals = row.get(items_column(m)) if fam.cell != "personality" else None
    if fam.cell == "personality" or not isinstance(cells, (list, tuple, np.ndarray)) \
            or not isinstance(vals, (list, tuple, np.ndarray)):
        v = row.get(m.name)
        return {} if _is_nan(v) else {"": float(v)}
    return dict(zip(cells, np.asarray(vals, dtype=np.float64).tolist()))


def _expected(row: pd.Series | None, fam: Family, n_valid: int) -> int:
    """Cells expected of one personality: the family's count (one cell for PS), never fewer than
    the valid cells seen (hand-built or legacy rows carry no counts)."""
    if row is None:
        return n_valid
    e = row.get(count_column(fam, "expected"))
    e = 0 if _is_nan(e) else int(e)
    return max(min(e, 1) if fam.cell == "personality" else e, n_valid)


def _count(row: pd.Series, col: str) -> int:
    v = row.get(col)
    return 0 if _is_nan(v) else int(v)


def _personality_counts(rows: list[pd.Series], fam: Family, m: Metric) -> dict[str, int]:
    """PS is compared per personality: one without a value counts once, as failed when any of its
    votes failed, else invalid when any was invalid, else not run."""
    counts = {"invalid": 0, "failed": 0, "not_run": 0}
    for r in rows:
        if not _is_nan(r.get(m.name)):
            continue
        kind = ("failed" if _count(r, count_column(fam, "failed")) else
                "invalid" if _count(r, count_column(fam, "invalid")) else "not_run")
        counts[kind] += 1
    return counts


def _metric_rows(frame: pd.DataFrame, m: Metric, judge: str | None, methods: Sequence[str],
                 people: Sequence[str], threshold: float, seed: int, n_resamples: int) -> list[dict]:
    fam = m.family
    by = {(r["method"], r["personality_id"]): r for _, r in frame.iterrows()}
    valid = {meth: {p: (_cell_values(by[(meth, p)], m) if (meth, p) in by else {}) for p in people}
             for meth in methods}
    expected = {p: max((_expected(by.get((meth, p)), fam, len(valid[meth][p])) for meth in methods), default=0)
                for p in people}
    cells_expected = int(sum(expected.values()))
    n_valid = {meth: sum(len(v) for v in valid[meth].values()) for meth in methods}
    coverage = {meth: (n_valid[meth] / cells_expected if cells_expected else math.nan) for meth in methods}
    # Calibration methods are anchors: they never shape the common set, so adding them to a run leaves
    # every other method's row as it was (they are shown on the common cells they have).
    compared = [meth for meth in methods if coverage[meth] >= threshold and not is_calibration(meth)]
    base = compared or [meth for meth in methods if n_valid[meth] and not is_calibration(meth)]
    common = {p: (set.intersection(*(set(valid[meth][p]) for meth in base)) if base else set()) for p in people}
    out = []
    for meth in methods:
        rows_m = [by[(meth, p)] for p in people if (meth, p) in by]
        if fam.cell == "personality":
            counts = _personality_counts(rows_m, fam, m)
        else:
            counts = {k: sum(_count(r, count_column(fam, k)) for r in rows_m) for k in ("invalid", "failed", "not_run")}
        # A personality this method has no row for is expected all the same: not run.
        counts["not_run"] += sum(expected[p] for p in people if (meth, p) not in by)
        malformed = sum(_count(r, count_column(fam, "malformed")) for r in rows_m) if fam.cell == "item" else 0
        no_item = sum(_count(r, count_column(fam, "no_item")) for r in rows_m) if fam.cell == "item" else 0
        embedders = sorted({str(r.get("embedding_model")) for r in rows_m
                            if isinstance(r.get("embedding_model"), str) and r.get("embedding_model")})
        base_row = {
            "method": meth, "judge": judge, "metric": m.name, "personalities_expected": sum(1 for e in
                                                                                           expected.values() if e),
            "cells_valid": n_valid[meth], "cells_expected": cells_expected, "coverage": coverage[meth],
            "below_coverage": bool(not (coverage[meth] >= threshold)), "n_invalid": counts["invalid"],
            "n_failed": counts["failed"], "n_not_run": counts["not_run"], "n_malformed": malformed,
            "n_no_item": no_item,
            "embedding_model": ", ".join(embedders),
        }
        own_reason = ("not run" if not rows_m else
                      empty_reason(fam, cells_expected, n_valid[meth], counts["invalid"], counts["failed"],
                                   counts["not_run"], fam.cells_noun, no_item))
        per_common, used = [], 0
        for p in people:
            cells = common[p] & set(valid[meth][p])
            if cells:
                used += len(cells)
                per_common.append(float(np.mean([valid[meth][p][c] for c in sorted(cells)])))
        per_all = [float(np.mean(list(v.values()))) for v in valid[meth].values() if v]
        for view, values, n_used in (("common", per_common, used), ("all_valid", per_all, n_valid[meth])):
            ci = macro_interval(values, seed=seed, n_resamples=n_resamples)
            reason = own_reason
            if not values and not reason:
                reason = f"no {fam.cells_noun} valid under every compared method"
            out.append({**base_row, "view": view, "value": ci.estimate, "ci_low": ci.low, "ci_high": ci.high,
                        "n_personalities": ci.n, "cells_used": n_used, "best": False,
                        "empty_reason": reason if math.isnan(ci.estimate) else ""})
    return out


def mark_best(df: pd.DataFrame, metrics: Sequence[Metric] = METRICS) -> pd.DataFrame:
    """Set ``best`` on the numerically best method per (judge, metric, view); ties are all marked.

    A method below the coverage threshold is never marked best: its value rests on fewer cells; nor is a
    calibration method (``reference`` and the floors are anchors, not contenders).
    """
    out = df.copy()
    out["best"] = False
    views = out["view"] if "view" in out.columns else pd.Series("", index=out.index)
    eligible = ~out["below_coverage"].astype(bool) if "below_coverage" in out.columns else True
    eligible = eligible & ~out["method"].astype(str).map(is_calibration)
    for m in metrics:
        sel = out[(out["metric"] == m.name) & eligible]
        for _, grp in sel.groupby([sel["judge"].fillna(""), views[sel.index]], sort=False):
            vals = grp["value"].astype(float).dropna()
            if vals.empty:
                continue
            target = vals.max() if m.higher_is_better else vals.min()
            out.loc[vals.index[np.isclose(vals.to_numpy(), target, rtol=0, atol=1e-12)], "best"] = True
    return out


def leaderboard(
    method_scores: pd.DataFrame,
    *,
    coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    seed: int = 0,
    n_resamples: int = CI_N_RESAMPLES,
    method_order: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Long table: one row per (method, judge, metric, view) with the macro mean, its 95%
    percentile-bootstrap CI over personalities, coverage, the best mark and, when empty, why.

    Judged metrics are per judge and never averaged across judges (their calibrations differ);
    MCQ rows have ``judge`` None. Personalities are those present in ``method_scores``.
    """
    if method_scores.empty:
        return pd.DataFrame({n: pd.Series(dtype=_DTYPES[k]) for n, k in LEADERBOARD_FIELDS})
    present = sorted(method_scores["method"].astype(str).unique())
    order = list(method_order or [])
    methods = [m for m in order if m in present] + [m for m in present if m not in order]
    people = sorted(method_scores["personality_id"].astype(str).unique())
    judges = sorted(method_scores["judge"].astype(str).unique())
    rows: list[dict] = []
    for m in JUDGED_METRICS:
        for j in judges:
            frame = method_scores[method_scores["judge"] == j]
            rows += _metric_rows(frame, m, j, methods, people, coverage_threshold, seed, n_resamples)
    mcq = mcq_rows(method_scores)
    for m in MCQ_METRICS:
        rows += _metric_rows(mcq, m, None, methods, people, coverage_threshold, seed, n_resamples)
    base_cols = [c for c in LEADERBOARD_COLUMNS if c not in dict(NORMALISED_FIELDS)]
    df = attach(mark_best(pd.DataFrame(rows, columns=base_cols)), method_scores, seed=seed, n_resamples=n_resamples)
    df = df[LEADERBOARD_COLUMNS]
    for n, k in LEADERBOARD_FIELDS:
        if k != "str":
            df[n] = df[n].astype(_DTYPES[k])
    return df.reset_index(drop=True)


_DTYPES = {"str": object, "int": "int64", "float": "float64", "bool": bool}


def paired_values(frame: pd.DataFrame, m: Metric, method_a: str, method_b: str) -> pd.DataFrame:
    """Per personality, the two methods' values of ``m`` over the cells both have a valid value for
    (one judge's rows, or MCQ rows): what a paired test compares. Columns ``a``, ``b``, ``cells``;
    personalities without a shared cell are left out."""
    rows = {}
    for meth in (method_a, method_b):
        sub = frame[frame["method"] == meth]
        rows[meth] = {str(r["personality_id"]): _cell_values(r, m) for _, r in sub.iterrows()}
    out = []
    for pid in sorted(set(rows[method_a]) & set(rows[method_b])):
        va, vb = rows[method_a][pid], rows[method_b][pid]
        shared = sorted(set(va) & set(vb))
        if shared:
            out.append({"personality_id": pid, "a": float(np.mean([va[c] for c in shared])),
                        "b": float(np.mean([vb[c] for c in shared])), "cells": len(shared)})
    return pd.DataFrame(out, columns=["personality_id", "a", "b", "cells"])
