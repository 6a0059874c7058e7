"""What the UI shows for a step beyond the generic table metadata (``batching.table_metadata``).

One function per step that has more to say, ``(config, cell, inputs, output) -> metadata``, called
by the factory for every partition it materialises: the premise judge's headline numbers, which
methods a per-personality summary covers, the leaderboard's report tables, the report's sections.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.steps import Cell

from .batching import preview_markdown

_CLUSTER_ROWS = 15


def _md(frame: pd.DataFrame, rows: int = 20) -> str:
    """A small table as markdown with floats at three decimals (the preview's ``str`` shows 16 digits)."""
    floats = frame.select_dtypes("float").columns
    return preview_markdown(frame.assign(**{c: frame[c].round(3) for c in floats}), rows=rows)


def _num(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def premise_metadata(df: pd.DataFrame) -> dict[str, object]:
    """Seed 002's headline numbers of a verdict table, attribution split first, for the UI."""
    from interviewsim_core.premise import headline, label_cluster_table

    if df.empty:
        return {}
    head = headline(df)
    overall = head.overall.iloc[0]
    clusters = label_cluster_table(df).head(_CLUSTER_ROWS)
    return {
        "attribution_split": dg.MetadataValue.md(_md(head.attribution)),
        "pass_rate": _num(overall.pass_rate),
        "pass_rate_ci": [_num(overall.pass_rate_ci_low), _num(overall.pass_rate_ci_high)],
        "mean_decontextuality": _num(overall.mean_decontextuality),
        "judged": int(overall.n_pass + overall.n_fail),
        "by_artifact_kind": dg.MetadataValue.md(_md(head.by_kind)),
        "label_clusters": dg.MetadataValue.md(_md(clusters, rows=_CLUSTER_ROWS)),
    }


def _premise(cfg: EvalConfig, cell: Cell, inputs: dict, df: pd.DataFrame) -> dict[str, object]:
    return premise_metadata(df)


def _user_premise(cfg: EvalConfig, cell: Cell, inputs: dict, df: pd.DataFrame) -> dict[str, object]:
    return {**premise_metadata(df), "source": dg.MetadataValue.path(str(cfg.premise_conclusions))}


def _personality_scores(cfg: EvalConfig, cell: Cell, inputs: dict, df: pd.DataFrame) -> dict[str, object]:
    got = inputs["method_scores"]
    return {"methods_present": [m for m in cfg.methods if m in got],
            "methods_missing": [m for m in cfg.methods if m not in got]}


def _leaderboard(cfg: EvalConfig, cell: Cell, inputs: dict, df: pd.DataFrame) -> dict[str, object]:
    """The report's own tables (best per judge marked, CIs, significant paired tests), from the scores in memory."""
    from interviewsim_core.pipeline.tables import concat_table
    from interviewsim_core.report import build_report, leaderboard_markdown

    scores = concat_table("method_scores", inputs["method_scores"].values())
    tables_md = leaderboard_markdown(build_report(tables={"method_scores": scores}, seed=cfg.seed,
                                                  coverage_threshold=cfg.coverage_threshold))
    return {"partitions_read": len(inputs["method_scores"]), "report_tables": dg.MetadataValue.md(tables_md)}


def report_metadata(data, paths) -> dict[str, object]:
    """What the UI shows for a report: where it is, which sections ran (and why not), the leaderboard."""
    from interviewsim_core.report import leaderboard_markdown

    sections = data.sections.values()
    rows = ["| section | status | note |", "|---|---|---|"]
    for s in sections:
        note = s.note.replace("|", "\\|") if s.status != "ok" else ""
        rows.append(f"| {s.title} | {s.status} | {note} |")
    return {
        "html": dg.MetadataValue.path(str(paths.html)),
        "json": dg.MetadataValue.path(str(paths.json)),
        "sections_ok": sum(1 for s in sections if s.status == "ok"),
        "sections_not_run": sorted(s.key for s in sections if s.status != "ok"),
        "section_status": dg.MetadataValue.md("\n".join(rows)),
        "leaderboard": dg.MetadataValue.md(leaderboard_markdown(data)),
        "n_personalities": int(data.meta.get("n_personalities", 0)),
        "methods": list(data.meta.get("methods", [])),
        "judges": list(data.meta.get("judges", [])),
    }


def _report(cfg: EvalConfig, cell: Cell, inputs: dict, out: Any) -> dict[str, object]:
    data, paths = out
    return report_metadata(data, paths)


PRESENTERS: dict[str, Callable[[EvalConfig, Cell, dict, Any], dict[str, object]]] = {
    "premise_verdicts": _premise,
    "user_premise_verdicts": _user_premise,
    "personality_scores": _personality_scores,
    "leaderboard": _leaderboard,
    "report": _report,
}
