"""Paired comparisons between methods, per judge (the paper's Section 3.1 and Appendix C).

Two methods are always compared on the same people: per-personality differences, tested with a
sign-flip permutation (``metrics.statistics.paired_permutation_test``). The default pairs are
the comparisons the paper's findings rest on, restricted to the methods that ran. Every table of
tests carries ``p_holm``: Holm's adjustment within each (judge, metric) family of the table
(``with_holm``), since a table of many tests turns up some p < 0.05 by chance.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..metrics.leaderboard import paired_values
from ..metrics.scores import mcq_rows
from ..metrics.statistics import holm, paired_permutation_test
from ..strategies import GENERATOR_SEPARATOR, split_key
from .catalog import JUDGED_METRICS, MCQ_METRICS, Metric, metric, order_methods

__all__ = ["PAIRED_COLUMNS", "default_pairs", "compare_methods", "paired_tests", "with_holm"]

PAIRED_COLUMNS = ["method_a", "method_b", "judge", "metric", "mean_difference", "p_value", "p_holm", "n", "cells",
                  "exact", "better"]
N_RESAMPLES = 9999


def default_pairs(methods: Iterable[str]) -> list[tuple[str, str]]:
    """The paper's comparisons among ``methods``: each vs simple, chrono-1000 vs memory-100,
    chrono-100 vs 500 vs 1000, wiki-long vs wiki (first element is the method tested against the second).

    With several generators, within each generator's keys (``warm/chrono-100`` vs ``warm/simple``): a method
    of one generator against another's is the generator comparison (``generators.generator_pairs``), not this."""
    groups: dict[str | None, set[str]] = {}
    for k in set(methods):
        label, method = split_key(k)
        groups.setdefault(label, set()).add(method)
    out = []
    for label in sorted(groups, key=lambda x: (x is not None, x or "")):
        prefix = "" if label is None else label + GENERATOR_SEPARATOR
        out += [(prefix + a, prefix + b) for a, b in _paper_pairs(groups[label])]
    return out


def _paper_pairs(present: set[str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if "simple" in present:
        pairs += [(m, "simple") for m in order_methods(present) if m != "simple"]
    pairs += [("chrono-1000", "memory-100"), ("chrono-500", "chrono-100"), ("chrono-1000", "chrono-500"),
              ("chrono-1000", "chrono-100"), ("wiki-long", "wiki")]
    seen: set[tuple[str, str]] = set()
    out = []
    for a, b in pairs:
        if a in present and b in present and (a, b) not in seen:
            seen.add((a, b))
            out.append((a, b))
    return out


def with_holm(tests: pd.DataFrame) -> pd.DataFrame:
    """``tests`` (``PAIRED_COLUMNS`` but ``p_holm``) with ``p_holm``: ``statistics.holm`` over each (judge, metric)
    family of the table, every pair tested under that judge and metric. Why per family: the judges' scales and the
    metrics differ, and a reader compares methods within one column; a test with no pairs (p NaN) stays NaN."""
    out = tests.assign(p_holm=np.nan)
    for _, grp in out.groupby([out["judge"].fillna(""), out["metric"]], sort=False):
        out.loc[grp.index, "p_holm"] = holm(grp["p_value"].astype(float).to_numpy())
    return out[PAIRED_COLUMNS].reset_index(drop=True)


def _better(m: Metric, diff: float) -> str | None:
    if diff != diff or diff == 0:
        return None
    return "a" if (diff > 0) == m.higher_is_better else "b"


def compare_methods(
    method_scores: pd.DataFrame,
    method_a: str,
    method_b: str,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> pd.DataFrame:
    """Paired test of ``method_a - method_b`` for every metric: per judge for judged metrics,
    once (judge None) for MCQ. Each personality's two values are taken over the cells (questions,
    items) both methods have a valid value for, so the pair is compared on one question set;
    personalities missing under either method, or with no shared cell, are left out.

    ``better`` says which side the difference favours given the metric's direction ("a"/"b"),
    independent of significance: read it with ``p_value`` (``p_holm`` is ``p_value`` here: one test per family).
    """
    keys = list(metrics) if metrics is not None else [m.key for m in JUDGED_METRICS + MCQ_METRICS]
    rows = []
    if method_scores.empty:
        return pd.DataFrame(columns=PAIRED_COLUMNS)
    judges = sorted(method_scores["judge"].unique())
    mcq = mcq_rows(method_scores)
    for key in keys:
        m = metric(key)
        targets = [(j, method_scores[method_scores["judge"] == j]) for j in judges] if m.judged else [(None, mcq)]
        for judge, frame in targets:
            pv = paired_values(frame, m, method_a, method_b)
            t = paired_permutation_test(pv["a"].to_numpy(), pv["b"].to_numpy(), seed=seed, n_resamples=n_resamples)
            rows.append({"method_a": method_a, "method_b": method_b, "judge": judge, "metric": key,
                         "mean_difference": t.mean_difference, "p_value": t.p_value, "n": t.n,
                         "cells": int(pv["cells"].sum()), "exact": t.exact, "better": _better(m, t.mean_difference)})
    return with_holm(pd.DataFrame(rows, columns=[c for c in PAIRED_COLUMNS if c != "p_holm"]))


def paired_tests(
    method_scores: pd.DataFrame,
    pairs: Sequence[tuple[str, str]] | None = None,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> pd.DataFrame:
    """``compare_methods`` over ``pairs`` (default: ``default_pairs`` of the methods present), ``p_holm`` adjusted
    over the whole table (``with_holm``)."""
    if method_scores.empty:
        return pd.DataFrame(columns=PAIRED_COLUMNS)
    chosen = list(pairs) if pairs is not None else default_pairs(method_scores["method"].unique())
    frames = [compare_methods(method_scores, a, b, metrics, seed, n_resamples) for a, b in chosen]
    frames = [f for f in frames if not f.empty]
    return with_holm(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame(columns=PAIRED_COLUMNS)
