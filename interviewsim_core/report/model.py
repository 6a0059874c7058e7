"""What a built report holds: a header of facts about the run and named sections of tables.

Plain frames rather than per-section classes: every consumer (HTML, JSON, markdown, the Dagster
metadata) walks the same structure, and the JSON is the sections' frames as records, so the
HTML and the JSON cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

__all__ = ["Section", "ReportData", "jsonable"]

SectionStatus = Literal["ok", "not_run", "failed"]
"""``failed``: the section's inputs could not be computed (e.g. its embedding model failed); the note says why."""


def jsonable(value: Any) -> Any:
    """Numpy scalars to Python, NaN to None, arrays/tuples to lists (recursively)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return None if math.isnan(v) or math.isinf(v) else v
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [jsonable(r) for r in df.to_dict(orient="records")]


@dataclass(frozen=True)
class Section:
    """One part of the report; ``not_run`` sections keep a note saying what is missing and why."""

    key: str
    title: str
    status: SectionStatus
    note: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    """Small JSON-ready values that are not tables (e.g. the premise cross-check)."""

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "status": self.status, "note": self.note,
                "tables": {k: records(v) for k, v in self.tables.items()}, **jsonable(self.extra)}


@dataclass(frozen=True)
class ReportData:
    """Everything the report shows, before any formatting."""

    meta: dict[str, Any]
    sections: dict[str, Section]

    def section(self, key: str) -> Section:
        return self.sections[key]

    def to_dict(self) -> dict[str, Any]:
        """The report.json document: the same numbers the HTML shows, unrounded."""
        return {"meta": jsonable(self.meta), "sections": {k: s.to_dict() for k, s in self.sections.items()}}
