"""The report: the leaderboard as the paper presents it, the paper's analyses for the user's
corpus, and one self-contained HTML page plus a JSON of the same numbers.

Analyses are pure functions of the evaluation's tables (one module each); ``build`` gathers
them into a ``ReportData``; ``html`` and ``plots`` present it. Importing this package does not
import matplotlib or jinja2: only rendering does.
"""

from __future__ import annotations

from .build import ReportPaths, build_report, leaderboard_markdown, write_report
from .model import ReportData, Section
from .paired import compare_methods, default_pairs, paired_tests

__all__ = [
    "ReportData",
    "ReportPaths",
    "Section",
    "build_report",
    "compare_methods",
    "default_pairs",
    "leaderboard_markdown",
    "paired_tests",
    "write_report",
]
