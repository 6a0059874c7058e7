"""The premise pipeline: seed 002's two-pass judge over stored conclusions.

``conclusions`` (what is judged, with its window), ``verdict`` (the seed's combination in code),
``steps`` (both passes through the gateway, the ``premise_verdicts`` table), ``metrics``
(headline numbers with CIs) and ``clustering`` (free-text labels, clustered offline).
"""

from __future__ import annotations

from .clustering import label_cluster_table, normalise_label
from .conclusions import (
    Conclusion,
    atomic_claim,
    atomic_item_conclusions,
    fact_summary_conclusions,
    load_user_conclusions,
    split_statements,
)
from .metrics import PremiseHeadline, attribution_split, cross_check, dominant_attribution, headline, rate_table
from .steps import judge_conclusions, premise_verdicts_for
from .verdict import Verdict, combine

__all__ = [
    "Conclusion",
    "PremiseHeadline",
    "Verdict",
    "atomic_claim",
    "atomic_item_conclusions",
    "attribution_split",
    "combine",
    "cross_check",
    "dominant_attribution",
    "fact_summary_conclusions",
    "headline",
    "judge_conclusions",
    "label_cluster_table",
    "load_user_conclusions",
    "normalise_label",
    "premise_verdicts_for",
    "rate_table",
    "split_statements",
]
