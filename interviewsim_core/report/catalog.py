"""How the report prints metrics and orders methods.

The metric facts (label, direction, unit, digits) come from the one registry in
``metrics/registry.py``, shared with the tables and the leaderboard, so a metric never reads
"lower is better" in one place and gets the best mark for its maximum in another.
"""

from __future__ import annotations

import math
from typing import Iterable

from ..metrics.registry import JUDGED_METRICS, MCQ_METRICS, METRICS, Metric, metric

__all__ = ["Metric", "METRICS", "JUDGED_METRICS", "MCQ_METRICS", "metric", "order_methods", "fmt", "is_missing",
           "readable"]


# The metric facts live in the one registry (metrics/registry.py); the report only formats them.
_BY_KEY = {m.name: m for m in METRICS}



def order_methods(methods: Iterable[str]) -> list[str]:
    """Methods in the paper's order (``strategies.METHOD_ORDER``) so a reader finds rows where the paper puts them."""
    from ..strategies import order_methods as paper_order

    return paper_order(methods)


def is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def readable(value: float) -> float:
    """A float rounded for a reader (the UI's metadata tables): three decimals from 0.1 up, three
    significant digits below (p-values, costs), and 0.0 for float noise under 1e-12 (a mean difference
    of -2.3e-19 between identical scores). The Parquet tables keep full precision."""
    v = float(value)
    if not math.isfinite(v):
        return v
    if abs(v) < 1e-12:
        return 0.0
    if abs(v) >= 0.1:
        return round(v, 3)
    return round(v, 2 - math.floor(math.log10(abs(v))))


def fmt(value: float | None, key: str | None = None, *, percent: bool | None = None, digits: int | None = None) -> str:
    """A number as the report prints it: metric-aware when ``key`` is given, "–" when missing."""
    if is_missing(value):
        return "–"
    m = _BY_KEY.get(key) if key else None
    pct = percent if percent is not None else (m.percent if m else False)
    d = digits if digits is not None else (m.digits if m else 3)
    v = float(value) * (100.0 if pct else 1.0)
    return f"{v:.{d}f}"
