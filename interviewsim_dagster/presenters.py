"""What the UI shows for a step beyond its table's summary (``table_summary``, ``batching.summary_metadata``).

One function per step that has more to say, ``(config, cell, inputs, output) -> metadata`` (``inputs()`` reads
the partition's inputs), called by the recording for every partition a stage run makes: the premise judge's headline numbers, which
methods a per-personality summary covers, the leaderboard's report tables, the report's sections.

Why the leaderboard and the paired tests are ``MetadataValue.table`` values and not only markdown:
the asset page renders a table value inline, sortable, with typed columns, while a markdown value
sits behind a "[Show Markdown]" click. Every row of the leaderboard's headline view is there (one
row per method, judge and metric), with its coverage as "valid / expected cells" so a gap shows
where it is, not only as the minimum over a method's metrics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.config import EvalConfig, generator_label
from interviewsim_core.pipeline.steps import Cell

from .batching import preview_markdown

_CLUSTER_ROWS = 15
Inputs = Callable[[], dict]
"""A partition's inputs, read when called: only the leaderboard's headline needs them, and the recording of a
partition the action's worker made reads them back from the data root (``runner.stored_inputs``)."""


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


def _premise(cfg: EvalConfig, cell: Cell, inputs: Inputs, df: pd.DataFrame) -> dict[str, object]:
    return premise_metadata(df)


def _user_premise(cfg: EvalConfig, cell: Cell, inputs: Inputs, df: pd.DataFrame) -> dict[str, object]:
    return {**premise_metadata(df), "source": dg.MetadataValue.path(str(cfg.premise_conclusions))}


def _personality_scores(cfg: EvalConfig, cell: Cell, inputs: Inputs, df: pd.DataFrame) -> dict[str, object]:
    """Which configured methods have a ``method_scores`` partition for the personality: its file, looked for
    without reading it (the recording of ``interviewsim run`` read every method's table back for this, 7% of
    the command's time at 100 personalities)."""
    from interviewsim_core.dataroot import exists
    from interviewsim_core.pipeline.storage import partition_path

    got = {m for m in cfg.methods if exists(partition_path(cfg.data_root, "method_scores", cell.personality, m))}
    return {"methods_present": [m for m in cfg.methods if m in got],
            "methods_missing": [m for m in cfg.methods if m not in got]}


MCQ_JUDGE = "n/a (MCQ: judge-independent)"
"""The judge cell of an MCQ row: MCQ accuracy and reward are scored against the answer key, no judge."""


def _judge(value: object) -> str:
    return value if isinstance(value, str) and value else MCQ_JUDGE


def _float(value: object) -> float | None:
    """A table cell for reading: empty when missing, rounded (``catalog.readable``: 1.112, not
    1.111742424242424; 0.0, not -2.3e-19); the leaderboard's Parquet keeps full precision."""
    from interviewsim_core.report.catalog import readable

    return None if value is None or (isinstance(value, float) and math.isnan(value)) else readable(value)


def leaderboard_table(board: pd.DataFrame) -> dg.TableMetadataValue:
    """Every row of the leaderboard's headline (``common``) view, as the asset page shows it inline."""
    from interviewsim_core.metrics.statistics import interval_note
    from interviewsim_core.report.leaderboard import view_rows

    records = [dg.TableRecord({
        "method": r.method, "judge": _judge(r.judge), "metric": r.metric,
        "value": _float(r.value), "ci_low": _float(r.ci_low), "ci_high": _float(r.ci_high),
        "coverage": f"{r.cells_valid}/{r.cells_expected} ({r.coverage * 100:.0f}%)" if r.cells_expected
        else "no cells expected",
        "below_threshold": bool(r.below_coverage), "n_personalities": int(r.n_personalities), "best": bool(r.best),
        "empty_reason": r.empty_reason if isinstance(r.empty_reason, str) else "",
        "ci_note": interval_note(r.value, r.ci_low, r.ci_high),
    }) for r in view_rows(board, "common").itertuples()]
    return dg.MetadataValue.table(records, schema=dg.TableSchema(columns=[
        dg.TableColumn("method", "string"), dg.TableColumn("judge", "string"), dg.TableColumn("metric", "string"),
        dg.TableColumn("value", "float", description="macro average over personalities, common question set"),
        dg.TableColumn("ci_low", "float"), dg.TableColumn("ci_high", "float",
                                                          description="95% bootstrap interval over personalities"),
        dg.TableColumn("coverage", "string", description="cells with a valid value / cells expected"),
        dg.TableColumn("below_threshold", "bool", description="under coverage_threshold: flagged, never best"),
        dg.TableColumn("n_personalities", "int"), dg.TableColumn("best", "bool", description="best per judge and metric"),
        dg.TableColumn("empty_reason", "string", description="why the value is empty, when it is"),
        dg.TableColumn("ci_note", "string", description="why the value sits on its interval's edge, when it does"),
    ]))


def paired_tests_table(tests: pd.DataFrame) -> dg.TableMetadataValue:
    """Every paired test between methods (not only p < 0.05), MCQ rows labelled judge-independent."""
    records = [dg.TableRecord({
        "method_a": r.method_a, "method_b": r.method_b, "judge": _judge(r.judge), "metric": r.metric,
        "a_minus_b": _float(r.mean_difference), "p_value": _float(r.p_value), "p_holm": _float(r.p_holm),
        "n_personalities": int(r.n),
        "better": r.better if isinstance(r.better, str) else "",
    }) for r in tests.itertuples()]
    return dg.MetadataValue.table(records, schema=dg.TableSchema(columns=[
        dg.TableColumn("method_a", "string"), dg.TableColumn("method_b", "string"), dg.TableColumn("judge", "string"),
        dg.TableColumn("metric", "string"), dg.TableColumn("a_minus_b", "float"), dg.TableColumn("p_value", "float"),
        dg.TableColumn("p_holm", "float", description="Holm-adjusted over the tests of each judge and metric"),
        dg.TableColumn("n_personalities", "int"),
        dg.TableColumn("better", "string", description="a or b when the difference favours one, else empty"),
    ]))


def _leaderboard(cfg: EvalConfig, cell: Cell, inputs: Inputs, df: pd.DataFrame) -> dict[str, object]:
    """The leaderboard inline (every row), the paired tests, and the report's own markdown Table 1."""
    from interviewsim_core.report import build_report, leaderboard_markdown

    scores = inputs()["method_scores"]
    # Only the scores: the first generator's label comes from the configuration (its keys carry none).
    data = build_report(tables={"method_scores": scores}, seed=cfg.seed, coverage_threshold=cfg.coverage_threshold,
                        first_generator=generator_label(cfg.generator))
    meta: dict[str, object] = {"partitions_read": len(scores[["personality_id", "method"]].drop_duplicates())}
    board = data.section("leaderboard")
    if board.status == "ok":
        meta["leaderboard"] = leaderboard_table(board.tables["leaderboard"])
    tests = data.section("paired_tests")
    if tests.status == "ok":
        meta["paired_tests"] = paired_tests_table(tests.tables["paired_tests"])
    meta["report_tables"] = dg.MetadataValue.md(leaderboard_markdown(data))
    meta.update(explorer_links(cfg))
    return meta


def explorer_links(cfg: EvalConfig) -> dict[str, object]:
    """The results explorer's address (the leaderboard with every row behind it) and the command that
    starts it on this data root, for the asset pages a reader reaches first."""
    from interviewsim_core.report.explorer import explorer_command
    from interviewsim_view.urls import explorer_url

    return {REPORT_VIEW_URL_KEY: dg.MetadataValue.url(explorer_url()),
            "explorer_command": dg.MetadataValue.text(explorer_command(str(cfg.data_root)))}


REPORT_VIEW_URL_KEY = "report_view"
"""Metadata key of the results explorer's address (``interviewsim view``, the ``interviewsim_view``
package) beside ``report_url``; ``explorer_command`` says how to start it on this data root."""


def report_metadata(data, paths) -> dict[str, object]:
    """What the UI shows for a report: a link to open it, where it is, which sections ran (and why not), the leaderboard.

    ``report_url`` is the explorer's ``/report`` page (``interviewsim view`` serves the data root's report):
    the asset page renders a url value as a link, and a browser refuses a ``file://`` link from an http
    page ("Not allowed to load local resource"); ``html`` keeps the file's path to copy.
    """
    from interviewsim_core.report import leaderboard_markdown

    sections = data.sections.values()
    rows = ["| section | status | note |", "|---|---|---|"]
    for s in sections:
        note = s.note.replace("|", "\\|") if s.status != "ok" else ""
        rows.append(f"| {s.title} | {s.status} | {note} |")
    from interviewsim_core.report.explorer import explorer_command
    from interviewsim_view.urls import explorer_url, report

    return {
        "report_url": dg.MetadataValue.url(explorer_url(path=report())),
        "explorer_command": dg.MetadataValue.text(explorer_command(str(paths.html.parent.parent))),
        REPORT_VIEW_URL_KEY: dg.MetadataValue.url(explorer_url()),
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


def _report(cfg: EvalConfig, cell: Cell, inputs: Inputs, out: Any) -> dict[str, object]:
    data, paths = out
    return report_metadata(data, paths)


PRESENTERS: dict[str, Callable[[EvalConfig, Cell, Inputs, Any], dict[str, object]]] = {
    "premise_verdicts": _premise,
    "user_premise_verdicts": _user_premise,
    "personality_scores": _personality_scores,
    "leaderboard": _leaderboard,
    "report": _report,
}
