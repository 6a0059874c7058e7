"""Metrics (per-item judgments -> per-personality scores -> macro averages) and statistics."""

from .scores import (
    MACRO_METRICS,
    METHOD_SCORE_COLUMNS,
    Aggregate,
    contradiction_ratio,
    cs_mean,
    macro_average,
    mcq_scores,
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
    "MACRO_METRICS",
    "METHOD_SCORE_COLUMNS",
    "Aggregate",
    "Interval",
    "PairedTest",
    "bootstrap_ci",
    "cohen_kappa",
    "contradiction_ratio",
    "cs_mean",
    "macro_average",
    "mcq_scores",
    "paired_method_test",
    "paired_permutation_test",
    "personality_scores",
    "ps_alignment",
    "spearman",
    "trait_levels",
]
