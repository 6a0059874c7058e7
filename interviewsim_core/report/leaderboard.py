"""The paper's Table 1 for any corpus, as the report and the Dagster metadata print it.

The numbers come from the one leaderboard computation (``metrics.leaderboard``: common question
set per judge, coverage, best marks, reasons for empty values); this module only selects a view,
orders methods the paper's way and renders markdown. Judged metrics are per judge and never
averaged across judges; MCQ is judge-independent.
"""

from __future__ import annotations

import html

import pandas as pd

from ..metrics.leaderboard import LEADERBOARD_COLUMNS, leaderboard, mark_best
from ..metrics.scores import mcq_rows
from ..metrics.statistics import interval_note
from ..strategies import order_keys
from .catalog import JUDGED_METRICS, MCQ_METRICS, Metric, fmt, is_missing, order_methods

__all__ = ["LEADERBOARD_COLUMNS", "leaderboard", "mark_best", "mcq_rows", "view_rows", "coverage_table",
           "cell_text", "md_text", "leaderboard_markdown_table", "row_order", "key_columns", "key_cells"]


def view_rows(board: pd.DataFrame, view: str = "common") -> pd.DataFrame:
    """The rows of one view (``common`` or ``all_valid``)."""
    if board.empty or "view" not in board.columns:
        return board
    return board[board["view"] == view].reset_index(drop=True)


def coverage_table(board: pd.DataFrame) -> pd.DataFrame:
    """Per method, judge and metric: cells valid / expected, whether below the threshold, and the
    invalid / failed / not-run / no-item counts behind the gap (one row per metric family would hide MCQ3 vs 4)."""
    cols = ["method", "judge", "metric", "cells_valid", "cells_expected", "coverage", "below_coverage",
            "cells_used", "n_invalid", "n_failed", "n_not_run", "n_malformed", "n_no_item", "empty_reason"]
    rows = view_rows(board, "common")
    if rows.empty:
        return pd.DataFrame(columns=cols)
    rank = {m: i for i, m in enumerate(order_methods(rows["method"]))}
    mrank = {m.key: i for i, m in enumerate(JUDGED_METRICS + MCQ_METRICS)}
    out = rows.assign(_m=rows["metric"].map(mrank), _r=rows["method"].map(rank), _j=rows["judge"].fillna(""))
    return out.sort_values(["_m", "_j", "_r"], kind="stable")[cols].reset_index(drop=True)


def cell_text(r) -> str:
    """A leaderboard value as text, or the reason it is empty; a flagged value says so."""
    if r is None:
        return "not run"
    if is_missing(r.value):
        return r.empty_reason or "no value"
    return fmt(r.value, r.metric) + (" (low coverage)" if r.below_coverage else "")


def md_text(text: str) -> str:
    """User text (method, judge names) inert in markdown that a UI may render as HTML."""
    return html.escape(str(text)).replace("|", "\\|")


def row_order(rows: pd.DataFrame) -> list[str]:
    """The method keys of leaderboard ``rows`` in display order: the paper's, or with several generators (a
    ``generator`` column, ``generators.with_generators``) grouped by generator (``strategies.order_keys``)."""
    return order_keys(rows["method"]) if "generator" in rows.columns else order_methods(rows["method"])


def key_columns(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(header, column) of the cells naming a row: the method key, or with several generators the generator and
    the method without its label, so a one-generator table stays as it was."""
    return [("Generator", "generator"), ("Method", "base_method")] if "generator" in rows.columns \
        else [("Method", "method")]


def key_cells(rows: pd.DataFrame, key: str, columns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(column, text) of the cells naming method ``key``'s row (``key_columns``); "" for a shared calibration
    method's generator."""
    if columns == [("Method", "method")]:
        return [("method", key)]
    row = rows[rows["method"] == key].iloc[0]
    return [(col, str(row[col])) for _, col in columns]


def leaderboard_markdown_table(board: pd.DataFrame, with_ci: bool = False, view: str = "common") -> str:
    """Table 1 as markdown: methods as rows, one column per (judged metric, judge), then MCQ; best in
    bold; an empty cell says why; a method under the coverage threshold is marked; an interval with its
    estimate on an edge carries a mark, explained under the table (``statistics.interval_note``)."""
    rows = view_rows(board, view)
    if rows.empty:
        return "_No method scores: the evaluation has not run._"
    judges = sorted(j for j in rows["judge"].dropna().unique())
    methods = row_order(rows)
    present = set(rows["metric"])
    columns: list[tuple[Metric, str | None]] = [(m, j) for m in JUDGED_METRICS for j in judges if m.key in present]
    columns += [(m, None) for m in MCQ_METRICS if m.key in present]
    index = {(r.method, r.judge if isinstance(r.judge, str) else None, r.metric): r for r in rows.itertuples()}
    first = key_columns(rows)
    head = [h for h, _ in first] + [f"{m.short} ({md_text(j)})" if j else m.short for m, j in columns] + ["Coverage"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    marks: dict[str, str] = {}  # an interval note -> its footnote mark
    for method in methods:
        cells = [md_text(text or "shared") for _, text in key_cells(rows, method, first)]
        covs = []
        for m, j in columns:
            r = index.get((method, j, m.key))
            text = md_text(cell_text(r))
            if r is not None and not is_missing(r.value):
                if with_ci and not is_missing(r.ci_low):
                    text += f" [{fmt(r.ci_low, m.key)}, {fmt(r.ci_high, m.key)}]"
                    note = interval_note(r.value, r.ci_low, r.ci_high)
                    if note:
                        marks.setdefault(note, "†" * (len(marks) + 1))
                        text += marks[note]
                text = f"**{text}**" if r.best else text
            if r is not None and not is_missing(r.coverage):
                covs.append(r.coverage)
            cells.append(text)
        cells.append(f"{min(covs) * 100:.0f}% (lowest)" if covs else "–")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"\n{mark} {note}" for note, mark in marks.items()]
    return "\n".join(lines)
