"""What the report's metrics are called, which way is better, and how each is printed.

One table of facts shared by the analyses, the HTML, the markdown and the plots, so a metric
never reads "lower is better" in one place and gets the best mark for its maximum in another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

__all__ = ["Metric", "METRICS", "JUDGED_METRICS", "MCQ_METRICS", "metric", "order_methods", "fmt", "is_missing"]


@dataclass(frozen=True)
class Metric:
    """One leaderboard column."""

    key: str
    """Column of ``method_scores``."""
    label: str
    short: str
    higher_is_better: bool
    judged: bool
    """False for MCQ: exact-match scoring, the same on every judge's row."""
    percent: bool
    """Shown as a percentage (the paper's convention for CR, PS and MCQ accuracy)."""
    digits: int


METRICS: tuple[Metric, ...] = (
    Metric("cs_mean", "Content Similarity (1-5, higher better)", "CS", True, True, False, 2),
    Metric("contradiction_ratio", "Contradiction Ratio (%, lower better)", "CR %", False, True, True, 2),
    Metric("ps_alignment", "Personality Similarity (%, higher better)", "PS %", True, True, True, 1),
    Metric("mcq3_accuracy", "MCQ 3-option accuracy (%)", "MCQ3 acc %", True, False, True, 1),
    Metric("mcq3_reward", "MCQ 3-option reward", "MCQ3 reward", True, False, False, 3),
    Metric("mcq4_accuracy", "MCQ 4-option accuracy (%)", "MCQ4 acc %", True, False, True, 1),
    Metric("mcq4_reward", "MCQ 4-option reward", "MCQ4 reward", True, False, False, 3),
)
JUDGED_METRICS = tuple(m for m in METRICS if m.judged)
MCQ_METRICS = tuple(m for m in METRICS if not m.judged)
_BY_KEY = {m.key: m for m in METRICS}

def metric(key: str) -> Metric:
    """The catalog entry of ``key``; KeyError names the known metrics."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r}; known: {sorted(_BY_KEY)}") from None


def order_methods(methods: Iterable[str]) -> list[str]:
    """Methods in the paper's order (``strategies.METHOD_ORDER``) so a reader finds rows where the paper puts them."""
    from ..strategies import order_methods as paper_order

    return paper_order(methods)


def is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt(value: float | None, key: str | None = None, *, percent: bool | None = None, digits: int | None = None) -> str:
    """A number as the report prints it: metric-aware when ``key`` is given, "–" when missing."""
    if is_missing(value):
        return "–"
    m = _BY_KEY.get(key) if key else None
    pct = percent if percent is not None else (m.percent if m else False)
    d = digits if digits is not None else (m.digits if m else 3)
    v = float(value) * (100.0 if pct else 1.0)
    return f"{v:.{d}f}"
