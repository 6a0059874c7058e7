"""Paired comparisons between methods, per judge (the paper's Section 3.1 and Appendix C).

Two methods are always compared on the same people: per-personality differences, tested with a
sign-flip permutation (``metrics.statistics.paired_permutation_test``). The default pairs are
the comparisons the paper's findings rest on, restricted to the methods that ran.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from ..metrics.leaderboard import paired_values
from ..metrics.scores import mcq_rows
from ..metrics.statistics import paired_permutation_test
from .catalog import JUDGED_METRICS, MCQ_METRICS, Metric, metric, order_methods

__all__ = ["PAIRED_COLUMNS", "default_pairs", "compare_methods", "paired_tests"]

PAIRED_COLUMNS = ["method_a", "method_b", "judge", "metric", "mean_difference", "p_value", "n", "cells", "exact",
                  "better"]
N_RESAMPLES = 9999


def default_pairs(methods: Iterable[str]) -> list[tuple[str, str]]:
    """The paper's comparisons among ``methods``: each vs simple, chrono-1000 vs memory-100,
    chrono-100 vs 500 vs 1000, wiki-long vs wiki (first element is the method tested against the second)."""
    present = set(methods)
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
    independent of significance: read it with ``p_value``.
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
    return pd.DataFrame(rows, columns=PAIRED_COLUMNS)


def paired_tests(
    method_scores: pd.DataFrame,
    pairs: Sequence[tuple[str, str]] | None = None,
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
) -> pd.DataFrame:
    """``compare_methods`` over ``pairs`` (default: ``default_pairs`` of the methods present)."""
    if method_scores.empty:
        return pd.DataFrame(columns=PAIRED_COLUMNS)
    chosen = list(pairs) if pairs is not None else default_pairs(method_scores["method"].unique())
    frames = [compare_methods(method_scores, a, b, metrics, seed, n_resamples) for a, b in chosen]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=PAIRED_COLUMNS)
