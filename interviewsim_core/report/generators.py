"""Several generators in one study (issue 44): who generated each leaderboard row, and the generators compared.

The generator is a key inside the method dimension (docs/DESIGN.md, "Generators"): the study's first generator
keeps the plain method names, every other one's keys are ``<label>/<method>``, and the calibration methods are
shared. So nothing here recomputes a metric: the generator x method table is the leaderboard's ``common`` rows
re-arranged, and the paired tests are ``paired.paired_tests`` over the pairs "the same method, another generator
against the first" (same personalities, same shared cells, Holm within each judge and metric).
"""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from ..pipeline.calls import CALIBRATION_MODEL
from ..pipeline.config import model_label
from ..strategies import GENERATOR_SEPARATOR, generator_and_method, order_methods, split_key
from ..strategies.calibration import CALIBRATION_METHODS
from . import paired
from .catalog import JUDGED_METRICS, MCQ_METRICS

__all__ = ["FIRST_GENERATOR", "GENERATOR_TABLE_COLUMNS", "GENERATOR_PAIRED_COLUMNS", "first_generator",
           "generators_in", "with_generators", "generator_table", "generator_pairs", "generator_paired_tests"]

FIRST_GENERATOR = "first generator"
"""The first generator's name when neither the configuration nor the generations table tells its label: the
generator whose keys are the plain method names."""

GENERATOR_TABLE_COLUMNS = ["metric", "judge", "method", "generator", "key", "value", "ci_low", "ci_high",
                           "n_personalities", "below_coverage", "empty_reason"]
GENERATOR_PAIRED_COLUMNS = ["method", "generator_a", "generator_b", *paired.PAIRED_COLUMNS]


def first_generator(generations: pd.DataFrame, given: str | None = None) -> str:
    """The label shown for the first generator: ``given`` (``generator_label`` of the configuration), else the
    label of the one model its answers in ``generations`` came from, else ``FIRST_GENERATOR`` (no generations
    table, as the Dagster leaderboard reads only scores, or one model per personality from a template)."""
    if given:
        return given
    if generations.empty or "model" not in generations.columns:
        return FIRST_GENERATOR
    keys = generations["method"].astype(str)
    plain = generations[~keys.str.contains(GENERATOR_SEPARATOR, regex=False) & ~keys.isin(CALIBRATION_METHODS)]
    models = {str(m) for m in plain["model"].dropna() if m != CALIBRATION_MODEL}
    return model_label(models.pop()) if len(models) == 1 else FIRST_GENERATOR


def generators_in(keys: Iterable[str], first_label: str) -> list[str]:
    """The generators that have a method key among ``keys``: the first one (plain keys) first, then the others by
    label. A study's calibration methods belong to none."""
    labels = [split_key(k)[0] for k in keys if k not in CALIBRATION_METHODS]
    return [first_label] * (None in labels) + sorted(set(labels) - {None})


def with_generators(board: pd.DataFrame, first_label: str) -> pd.DataFrame:
    """``board`` (any frame with a ``method`` key column) with ``generator`` and ``base_method`` after ``method``:
    the generator's label ("" for a shared calibration method) and the method without it."""
    pairs = [generator_and_method(str(k), first_label) for k in board["method"]]
    at = list(board.columns).index("method") + 1
    out = board.copy()
    out.insert(at, "generator", [g for g, _ in pairs])
    out.insert(at + 1, "base_method", [m for _, m in pairs])
    return out


def generator_table(board: pd.DataFrame) -> pd.DataFrame:
    """The generator x method values of every metric (``board``: a ``with_generators`` leaderboard): its
    ``common`` rows, calibration methods left out (shared, they are in the leaderboard); long, one row per
    (metric, judge, method, generator), metrics in the registry's order, methods in the paper's."""
    rows = board[(board["view"] == "common") & (board["generator"] != "")] if not board.empty else board
    if rows.empty:
        return pd.DataFrame(columns=GENERATOR_TABLE_COLUMNS)
    gens = {g: i for i, g in enumerate(_generator_order(rows))}
    methods = {m: i for i, m in enumerate(order_methods(rows["base_method"]))}
    metrics = {m.key: i for i, m in enumerate(JUDGED_METRICS + MCQ_METRICS)}
    out = rows.rename(columns={"method": "key"}).rename(columns={"base_method": "method"})
    out = out.assign(_m=out["metric"].map(metrics), _j=out["judge"].fillna(""), _r=out["method"].map(methods),
                     _g=out["generator"].map(gens))
    return out.sort_values(["_m", "_j", "_r", "_g"], kind="stable")[GENERATOR_TABLE_COLUMNS].reset_index(drop=True)


def _generator_order(rows: pd.DataFrame) -> list[str]:
    """The generators of a ``with_generators`` frame, the first (whose keys are plain) first."""
    keys = rows["method"].astype(str)
    first = next((g for g, k in zip(rows["generator"], keys) if split_key(k)[0] is None and g), FIRST_GENERATOR)
    return generators_in(keys, first)


def generator_pairs(keys: Iterable[str]) -> list[tuple[str, str]]:
    """For each method the first generator ran, each other generator's key of it against it
    (``warm/simple`` vs ``simple``): methods in the paper's order, generators by label."""
    present = set(keys)
    by_method: dict[str, list[str]] = {}
    for k in sorted(present):
        label, method = split_key(k)
        if label is not None and method in present:
            by_method.setdefault(method, []).append(k)
    return [(k, m) for m in order_methods(by_method) for k in by_method[m]]


def generator_paired_tests(method_scores: pd.DataFrame, first_label: str, seed: int = 0,
                           n_resamples: int = paired.N_RESAMPLES) -> pd.DataFrame:
    """``paired.paired_tests`` over ``generator_pairs``: a - b is the other generator minus the first, per judge
    (MCQ once), with ``p_holm`` over this table's tests of each judge and metric; ``method``, ``generator_a``
    and ``generator_b`` name what was compared."""
    pairs = generator_pairs(method_scores["method"].astype(str)) if not method_scores.empty else []
    if not pairs:
        return pd.DataFrame(columns=GENERATOR_PAIRED_COLUMNS)
    tests = paired.paired_tests(method_scores, pairs=pairs, seed=seed, n_resamples=n_resamples)
    a = [generator_and_method(str(k), first_label) for k in tests["method_a"]]
    return tests.assign(method=[m for _, m in a], generator_a=[g for g, _ in a],
                        generator_b=first_label)[GENERATOR_PAIRED_COLUMNS]
