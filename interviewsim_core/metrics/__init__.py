"""Metrics: the metric registry, per-item judgments -> per-personality scores -> the leaderboard,
and the statistics (bootstrap intervals, paired permutation tests, agreement)."""

from .leaderboard import leaderboard
from .registry import FAMILIES, JUDGED_METRICS, MCQ_METRICS, METRICS, Family, Metric, family, metric
from .scores import (
    MACRO_METRICS,
    METHOD_SCORE_COLUMNS,
    Aggregate,
    contradiction_ratio,
    cs_mean,
    macro_interval,
    personality_scores,
    ps_alignment,
    trait_levels,
)
from .statistics import (
    Interval,
    PairedTest,
    bootstrap_ci,
    cohen_kappa,
    paired_method_test,
    paired_permutation_test,
    spearman,
)

__all__ = [
    "FAMILIES",
    "JUDGED_METRICS",
    "MACRO_METRICS",
    "MCQ_METRICS",
    "METHOD_SCORE_COLUMNS",
    "METRICS",
    "Aggregate",
    "Family",
    "Interval",
    "Metric",
    "PairedTest",
    "bootstrap_ci",
    "cohen_kappa",
    "contradiction_ratio",
    "cs_mean",
    "family",
    "leaderboard",
    "macro_interval",
    "metric",
    "paired_method_test",
    "paired_permutation_test",
    "personality_scores",
    "ps_alignment",
    "spearman",
    "trait_levels",
]
