"""Render a ``ReportData`` as one self-contained HTML page (inline CSS, PNG data URIs, no script).

Cells are formatted here and nowhere else; each numeric cell also carries its unrounded value in
``data-v`` so a test (or a scraper) can check the page against report.json exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import jinja2
import pandas as pd

from ..metrics.normalised import COMMON_VIEW_NOTE, is_calibration
from ..metrics.statistics import interval_note
from . import plots
from .explorer import explorer_command
from .catalog import JUDGED_METRICS, MCQ_METRICS, fmt, is_missing, order_methods
from .leaderboard import cell_text, key_cells, key_columns, row_order, view_rows
from .model import ReportData, jsonable

__all__ = ["render_html", "TableView", "table_view"]

TEMPLATE_DIR = Path(__file__).parent / "templates"
TEMPLATE = "report.html.j2"

INTENDED_USE = (
    "Intended use: controlled research evaluation of personality-simulation methods on ethically obtained "
    "conversational data. Generated responses are experimental output, not statements by the people "
    "represented. Out of scope: impersonation, surveillance, targeted persuasion, high-stakes profiling, "
    "and deployment as a represented person. Reusers are responsible for ethics and legal review of their "
    "data and applications."
)


@dataclass
class Cell:
    text: str
    value: Any = None
    cls: str = ""
    key: str = ""
    ci: str = ""


@dataclass
class TableView:
    """A formatted table: header rows (each a list of (text, colspan)), then rows of cells."""

    headers: list[list[tuple[str, int]]]
    rows: list[list[Cell]]
    caption: str = ""
    cls: str = ""
    name: str = ""
    collapsed: bool = False
    """Rendered inside a closed <details>: detail a reader opens on demand (no script needed)."""


def _p(v: float) -> str:
    if is_missing(v):
        return "–"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


FORMATS: dict[str, Callable[[Any], str]] = {
    "text": lambda v: "–" if is_missing(v) else str(v),
    "int": lambda v: "–" if is_missing(v) else f"{int(v):,}",
    "pct": lambda v: fmt(v, percent=True, digits=1),
    "pct2": lambda v: fmt(v, percent=True, digits=2),
    "num1": lambda v: fmt(v, digits=1),
    "num2": lambda v: fmt(v, digits=2),
    "num3": lambda v: fmt(v, digits=3),
    "num4": lambda v: fmt(v, digits=4),
    "signed": lambda v: "–" if is_missing(v) else f"{v:+.4f}",
    "p": _p,
    "usd": lambda v: "–" if is_missing(v) else f"${v:,.6f}" if v < 1 else f"${v:,.2f}",
    "metric": lambda v: str(v),
}


IN_METRIC_UNIT = "in_metric_unit"
"""A ``table_view`` format: the value in its row's metric's display unit (``metric_key`` column), as the
leaderboard prints it: a CR or an MCQ accuracy in percent under a "CR %" label, a CS on its 1-5 scale.
Why: a table naming "CR %" beside 0.015 said 0.015%, and the leaderboard printed the same number as 1.5."""


def table_view(df: pd.DataFrame, columns: list[tuple[str, str, str]], name: str, caption: str = "",
               bold: Callable[[pd.Series], bool] | None = None) -> TableView:
    """``columns``: (column, header, format) with format a key of ``FORMATS``, or ``IN_METRIC_UNIT``."""
    rows = []
    for _, r in df.iterrows():
        strong = bool(bold(r)) if bold else False
        cells = []
        for col, _header, kind in columns:
            v = r.get(col)
            numeric = kind not in ("text", "metric")
            text = fmt(v, r.get("metric_key")) if kind == IN_METRIC_UNIT else FORMATS[kind](v)
            cells.append(Cell(text, jsonable(v) if numeric else None,
                              ("num" if numeric else "") + (" best" if strong else ""), col))
        rows.append(cells)
    return TableView([[(h, 1) for _, h, _ in columns]], rows, caption, name=name)


def pivot_view(df: pd.DataFrame, index: list[tuple[str, str]], column: str, value: str, kind: str, name: str,
               n_col: str | None = None, caption: str = "", best_low: bool = False) -> TableView:
    """Wide table: one row per ``index`` combination, one column per ``column`` value (methods in
    paper order); the best cell per row (min if ``best_low``) is bold, ``n_col`` shown under the value.
    A calibration method (``reference`` and the floors) is never the best cell."""
    cols = order_methods(df[column]) if column == "method" else sorted(df[column].unique())
    rows = []
    for key, grp in df.groupby([c for c, _ in index], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        by = grp.set_index(column)
        # Calibration methods are anchors, never contenders (docs/CALIBRATION.md): not shaded, not the target.
        vals = by[value].astype(float)[[not (column == "method" and is_calibration(str(k))) for k in by.index]]
        target = (vals.min() if best_low else vals.max()) if vals.notna().any() else None
        cells = [Cell(str(k), cls="method") for k in key]
        for c in cols:
            if c not in by.index or is_missing(by.at[c, value]):
                why = "not run" if c not in by.index else "no valid judgment"
                cells.append(Cell(why, None, "num empty", f"{'|'.join(map(str, key))}|{c}"))
                continue
            v = float(by.at[c, value])
            best = target is not None and len(vals) > 1 and c in vals.index and abs(v - target) < 1e-12
            ci = f"n={int(by.at[c, n_col])}" if n_col else ""
            cells.append(Cell(FORMATS[kind](v), v, "num" + (" best" if best else ""),
                              f"{'|'.join(map(str, key))}|{c}", ci))
        rows.append(cells)
    return TableView([[(h, 1) for _, h in index] + [(c, 1) for c in cols]], rows, caption, name=name)


def _difference(key: str, diff: float) -> str:
    """A paired difference in the metric's display unit: percentage points for % metrics."""
    if is_missing(diff):
        return "–"
    m = {x.key: x for x in JUDGED_METRICS + MCQ_METRICS}[key]
    return f"{diff * 100:+.2f} pts" if m.percent else f"{diff:+.3f}"


def _metric_name(key: str) -> str:
    names = {m.key: m.short for m in JUDGED_METRICS + MCQ_METRICS}
    return names.get(key, key)


def leaderboard_view(board: pd.DataFrame, name: str = "leaderboard", view: str = "common",
                     caption: str = "") -> TableView:
    """Table 1: methods as rows; CS, CR, PS one column per judge; then MCQ; value over its CI and
    coverage. An empty cell says why (not run / all invalid / all failed / no items); a method under
    the coverage threshold is marked "low coverage" and never bold."""
    rows_df = view_rows(board, view)
    judges = sorted(rows_df["judge"].dropna().unique())
    present = set(rows_df["metric"])
    judged = [m for m in JUDGED_METRICS if m.key in present]
    mcq = [m for m in MCQ_METRICS if m.key in present]
    names = key_columns(rows_df)
    top = [(h, 1) for h, _ in names] + [(m.label, len(judges)) for m in judged] \
        + [("MCQ (judge-independent)", len(mcq))] * bool(mcq)
    second = [("", 1)] * len(names) + [(j, 1) for _ in judged for j in judges] + [(m.short, 1) for m in mcq]
    index = {(r.method, r.judge if isinstance(r.judge, str) else None, r.metric): r for r in rows_df.itertuples()}
    rows = []
    for method in row_order(rows_df):
        cells = [Cell(text or "shared", cls="method") for _, text in key_cells(rows_df, method, names)]
        for m, judge in [(m, j) for m in judged for j in judges] + [(m, None) for m in mcq]:
            r = index.get((method, judge, m.key))
            key = f"{method}|{judge or ''}|{m.key}"
            if r is None or is_missing(r.value):
                cells.append(Cell(cell_text(r), None, "num empty", key))
                continue
            ci = "" if is_missing(r.ci_low) else f"[{fmt(r.ci_low, m.key)}, {fmt(r.ci_high, m.key)}]"
            ci += f" ({note})" if (note := interval_note(r.value, r.ci_low, r.ci_high)) else ""
            cov = "" if is_missing(r.coverage) else f"coverage {r.coverage * 100:.0f}%"
            flag = " flagged" if r.below_coverage else ""
            text = fmt(r.value, m.key) + (" (low coverage)" if r.below_coverage else "")
            cells.append(Cell(text, jsonable(r.value), "num" + (" best" if r.best else "") + flag, key,
                              " ".join(x for x in (ci, cov) if x)))
        rows.append(cells)
    return TableView([top, second], rows, caption, cls="leaderboard", name=name)


def paired_view(tests: pd.DataFrame, name: str, first: list[tuple[str, str, str]] | None = None) -> TableView:
    """A paired-tests table (``paired.PAIRED_COLUMNS``, ``first`` columns before them): the difference in the
    metric's unit, p and Holm's p; bold where Holm's p < 0.05 (the raw p of one test among many is not a finding)."""
    pt = tests.assign(judge=tests["judge"].fillna("(MCQ, any)"), metric=tests["metric"].map(_metric_name),
                      shown=[_difference(k, v) if n else "no shared valid cells"
                             for k, v, n in zip(tests["metric"], tests["mean_difference"], tests["n"])])
    return table_view(pt, [*(first or []),
        ("method_a", "a", "text"), ("method_b", "b", "text"), ("judge", "Judge", "text"),
        ("metric", "Metric", "text"), ("shown", "mean a - b", "text"), ("p_value", "p", "p"),
        ("p_holm", "p (Holm)", "p"), ("n", "pairs", "int"), ("cells", "shared cells", "int"),
        ("better", "favours", "text")], name, bold=lambda r: not is_missing(r["p_holm"]) and r["p_holm"] < 0.05)


def generator_view(table: pd.DataFrame, key: str, generators: list[str]) -> TableView | None:
    """One metric of the generator x method table (``generators.generator_table``): methods as rows in the paper's
    order, one column per generator under each judge (MCQ: one group); the value over its CI; the best generator
    of a method bold; an empty cell says why. None when the metric has no row."""
    rows_df = table[table["metric"] == key]
    if rows_df.empty:
        return None
    m = {x.key: x for x in JUDGED_METRICS + MCQ_METRICS}[key]
    judges = sorted(rows_df["judge"].dropna().unique()) if m.judged else [None]
    index = {(r.method, r.judge if isinstance(r.judge, str) else None, r.generator): r for r in rows_df.itertuples()}
    top = [("Method", 1)] + [(f"judge {j}" if j else "judge-independent", len(generators)) for j in judges]
    second = [("", 1)] + [(g, 1) for _ in judges for g in generators]
    rows = []
    for method in order_methods(rows_df["method"]):
        cells = [Cell(method, cls="method")]
        for j in judges:
            vals = [index[(method, j, g)].value for g in generators if (method, j, g) in index]
            vals = [v for v in vals if not is_missing(v)]
            target = (max(vals) if m.higher_is_better else min(vals)) if len(vals) > 1 else None
            for g in generators:
                r = index.get((method, j, g))
                ckey = f"{method}|{j or ''}|{g}|{key}"
                if r is None or is_missing(r.value):
                    cells.append(Cell("not run" if r is None else r.empty_reason or "no value", None, "num empty", ckey))
                    continue
                ci = "" if is_missing(r.ci_low) else f"[{fmt(r.ci_low, key)}, {fmt(r.ci_high, key)}]"
                best = target is not None and abs(r.value - target) < 1e-12
                cells.append(Cell(fmt(r.value, key) + (" (low coverage)" if r.below_coverage else ""),
                                  jsonable(r.value), "num" + (" best" if best else ""), ckey, ci))
        rows.append(cells)
    return TableView([top, second], rows, f"{m.label}: generator x method (the leaderboard's values; best generator "
                     "of each method in bold).", cls="leaderboard", name=f"generators_{key}")


HUMAN_METRIC_NAMES = {"cs": "CS", "fc": "FC", "mcq_item_valid": "MCQ item validity"}


def _why(df: pd.DataFrame, col: str) -> list[tuple[str, str, str]]:
    """The "Why empty" column, only when some row is empty (a full table needs no blank column)."""
    return [(col, "Why empty", "text")] if (df[col].astype(str) != "").any() else []


def _section_views(data: ReportData) -> dict[str, dict]:
    """Per section: its formatted tables and figures, in display order."""
    s = data.sections
    views: dict[str, dict] = {k: {"tables": [], "figures": []} for k in s}

    def add(key: str, view: TableView) -> None:
        views[key]["tables"].append(view)

    def fig(key: str, uri: str | None, caption: str) -> None:
        if uri:
            views[key]["figures"].append({"uri": uri, "caption": caption})

    board = s["leaderboard"].tables.get("leaderboard", pd.DataFrame())
    if s["leaderboard"].status == "ok":
        add("leaderboard", leaderboard_view(board, caption=f"No normalised score in this view: {COMMON_VIEW_NOTE}; "
                                                           "they are in the Calibration section."))
        fig("leaderboard", plots.metrics_plot(view_rows(board, "common")),
            "Methods against metrics on the common set, per judge (hatching) with 95% CIs.")
        add("leaderboard", table_view(s["leaderboard"].tables["coverage"].assign(
            judge=lambda d: d["judge"].fillna("(MCQ, any)"), metric=lambda d: d["metric"].map(_metric_name),
            below_coverage=lambda d: d["below_coverage"].map({True: "yes", False: ""})), [
            ("method", "Method", "text"), ("judge", "Judge", "text"), ("metric", "Metric", "text"),
            ("cells_valid", "Valid cells", "int"), ("cells_expected", "Expected", "int"),
            ("coverage", "Coverage %", "pct"), ("below_coverage", "Below threshold", "text"),
            ("cells_used", "Cells in common set", "int"), ("n_invalid", "Invalid", "int"),
            ("n_failed", "Failed", "int"), ("n_not_run", "Not run", "int"),
            ("n_malformed", "Malformed MCQ (scored)", "int"),
            ("n_no_item", "No MCQ item (atomic item invalid/failed)", "int"), ("empty_reason", "Why empty", "text")],
            "coverage", "Coverage per method: cells with a valid value over cells expected; invalid, failed and "
            "not-run outputs are counted here, never silently dropped."))
        cov = s["leaderboard"].tables["coverage"]
        # Complete runs need no coverage table in view; any gap opens it.
        views["leaderboard"]["tables"][-1].collapsed = bool(len(cov)) and bool((cov["coverage"] == 1.0).all())
        add("leaderboard", leaderboard_view(board, "leaderboard_all_valid", "all_valid",
                                            "Second view: each method on all of its own valid cells (not a "
                                            "common set; compare with care)."))
        views["leaderboard"]["tables"][-1].collapsed = True
    if s.get("calibration") is not None and s["calibration"].status == "ok":
        c = s["calibration"].tables
        norm = c["normalised"]
        names = [("generator", "Generator", "text"), ("base_method", "Method", "text")] \
            if "generator" in norm.columns else [("method", "Method", "text")]
        add("calibration", table_view(norm.assign(judge=norm["judge"].fillna("(MCQ, any)"), metric_key=norm["metric"],
                                                  metric=norm["metric"].map(_metric_name)), [
            *names, ("judge", "Judge", "text"), ("metric", "Metric", "text"),
            ("value", "Raw", IN_METRIC_UNIT), ("normalised", "Normalised", "num3"), ("norm_ci_low", "CI low", "num3"),
            ("norm_ci_high", "CI high", "num3"), ("norm_floor", "Floor", "text"),
            ("floor_value", "Floor raw", IN_METRIC_UNIT), ("norm_ceiling", "Ceiling", "text"),
            ("ceiling_value", "Ceiling raw", IN_METRIC_UNIT),
            ("n_norm_personalities", "Personalities", "int"), ("norm_reason", "Why undefined", "text"),
            ("norm_ci_note", "Interval note", "text")],
            "normalised", "Normalised scores: 0 = the floor, 1 = the ceiling, per judge and metric; raw values in "
            "the metric's unit (CR and MCQ accuracy in %)."))
        add("calibration", table_view(c["length_correlation"], [
            ("judge", "Judge", "text"), ("n", "CS judgments", "int"), ("questions", "Questions", "int"),
            ("r_within_question", "r (score, length) within question", "num3"),
            ("slope_per_100_chars", "CS per +100 chars", "num3"), ("note", "Note", "text")], "length_correlation",
            "Does the judge reward length? Correlation of CS and candidate length within each question."))
        add("calibration", table_view(c["length_adjusted"], [
            ("judge", "Judge", "text"), ("method", "Method", "text"), ("cs_raw", "CS raw", "num3"),
            ("cs_length_adjusted", "CS, length held fixed", "num3"), ("n", "n", "int")], "length_adjusted",
            "CS with length held fixed (the judge's within-question length slope removed)."))
        add("calibration", table_view(c["self_preference"].assign(
            same_family=c["self_preference"]["same_family"].map({True: "FLAGGED", False: ""})), [
            ("judge", "Judge", "text"), ("judge_model", "Model", "text"), ("judge_family", "Family", "text"),
            ("generator_families", "Generator families", "text"), ("same_family", "Self-preference", "text")],
            "self_preference", "A judge from the generator's model family may prefer its answers."))
        add("calibration", table_view(c["reference_contradictions"], [
            ("personality_id", "Personality", "text"), ("qa_id", "Question", "text"), ("judge", "Judge", "text"),
            ("explanation", "Judge's explanation", "text")], "reference_contradictions",
            "The reference run's Contradictions: the person's own words against the summary of them."))
    if s.get("human_validation") is not None and s["human_validation"].status == "ok":
        add("human_validation", table_view(s["human_validation"].tables["validation_figures"], [
            ("study_id", "Study", "text"), ("figure", "Figure", "text"), ("kind", "Task kind", "text"),
            ("judge", "Judge", "text"), ("group", "Group", "text"), ("count", "Count", "int"), ("n", "n", "int"),
            ("rate", "Rate (kappa for *_kappa)", "num3"), ("ci_low", "CI low", "num3"),
            ("ci_high", "CI high", "num3"), ("note", "Note", "text")], "validation_figures",
            "The paper's human validation figures, each with its count and 95% interval."))
    if s["paired_tests"].status == "ok":
        add("paired_tests", paired_view(s["paired_tests"].tables["paired_tests"], "paired_tests"))
    gen = s.get("generators")
    if gen is not None and gen.status == "ok":
        for m in JUDGED_METRICS + MCQ_METRICS:
            view = generator_view(gen.tables["by_generator"], m.key, gen.extra["generators"])
            if view is not None:
                add("generators", view)
        fig("generators", plots.tradeoff_plot(gen.tables["by_generator"]),
            "Content Similarity against Contradiction Ratio, per judge: one point per generator (colour) and "
            "method (label); up and to the left is better.")
        add("generators", paired_view(gen.tables["paired_generators"], "paired_generators",
                                      [("method", "Method", "text"), ("generator_a", "Generator a", "text"),
                                       ("generator_b", "b (first)", "text")]))
    if s["judge_agreement"].status == "ok":
        add("judge_agreement", table_view(s["judge_agreement"].tables["judge_agreement"], [
            ("judge_a", "Judge A", "text"), ("judge_b", "Judge B", "text"), ("measure", "Measure", "text"),
            ("items", "Items", "text"), ("n", "n", "int"), ("agreement", "Exact agreement %", "pct"),
            ("kappa", "kappa", "num3"), ("spearman", "Spearman", "num3")], "judge_agreement"))
    if s["human_agreement"].status == "ok":
        ha = s["human_agreement"].tables["human_agreement"]
        add("human_agreement", table_view(ha.assign(metric=ha["metric"].map(HUMAN_METRIC_NAMES)), [
            ("judge", "Judge (builder for MCQ items)", "text"), ("metric", "Metric", "text"),
            ("measure", "Measure", "text"), ("n", "n", "int"), ("value", "Value", "num3"),
            *_why(ha, "note")], "human_agreement"))
    if s["ps_stability"].status == "ok":
        t = s["ps_stability"].tables
        add("ps_stability", table_view(t["summary"], [
            ("judge", "Judge", "text"), ("mean_alignment", "Mean train/test alignment %", "pct"),
            ("ci_low", "CI low %", "pct"), ("ci_high", "CI high %", "pct"),
            ("n_personalities", "Personalities", "int"), ("n_undefined", "Undefined", "int"),
            ("paper", "Paper %", "pct"), *_why(t["summary"], "reason")], "ps_stability",
            "Train/test profile alignment per judge, beside the paper's."))
        levels = [(f"{side}_{tr}", f"{side} {tr[0].upper()}", "text") for side in ("train", "test")
                  for tr in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")]
        add("ps_stability", table_view(t["per_personality"], [
            ("personality_id", "Personality", "text"), ("judge", "Judge", "text"),
            ("alignment", "Alignment %", "pct"), ("n_traits", "Traits", "int"),
            ("invalid", "Invalid votes", "int"), *levels], "ps_stability_per_personality",
            "Per personality: modal level per trait (O, C, E, A, N) from the training and the held-out answers."))
        views["ps_stability"]["tables"][-1].collapsed = True
    for key, tname, label in (("tag_breakdown", "by_tag", "Tag"), ("category_breakdown", "by_category", "Category")):
        if s[key].status == "ok":
            df = s[key].tables[tname]
            add(key, pivot_view(df, [("judge", "Judge"), ("group", label)], "method", "contradiction_ratio", "pct2",
                                tname, "n_judged", "Contradiction ratio (%) per method; n = FC judgments in the cell; "
                                "lowest per row in bold.", best_low=True))
            add(key, pivot_view(df, [("judge", "Judge"), ("group", label)], "method", "cs_mean", "num2",
                                f"{tname}_cs", "n_cs", "Content Similarity (1-5) per method; highest per row in bold."))
            fig(key, plots.breakdown_plot(df, f"Contradiction ratio by {label.lower()}"),
                f"Contradiction ratio by {label.lower()}, per judge.")
    if s["mcq"].status == "ok":
        t = s["mcq"].tables
        fig("mcq", plots.mcq_distribution_plot(t["prediction_distribution"]),
            "Which option kind each method picked (Tables 3 and 14).")
        add("mcq", table_view(t["prediction_distribution"], [
            ("method", "Method", "text"), ("n_options", "Options", "int"), ("kind", "Chosen kind", "text"),
            ("share", "Share %", "pct"), ("count", "Count", "int")], "prediction_distribution",
            "Prediction distribution by option kind (Tables 3 and 14)."))
        views["mcq"]["tables"][-1].collapsed = True
        add("mcq", table_view(t["accuracy_by_position"], [
            ("method", "Method", "text"), ("n_options", "Options", "int"), ("position", "Correct at", "text"),
            ("accuracy", "Accuracy %", "pct"), ("n", "Items", "int")], "accuracy_by_position",
            "Accuracy by shuffled position of the correct option (Tables 15 and 16)."))
        add("mcq", table_view(t["length_bias"], [
            ("method", "Method", "text"), ("n_options", "Options", "int"),
            ("acc_longest", "Correct is longest: acc %", "pct"), ("n_longest", "n", "int"),
            ("acc_not_longest", "Not longest: acc %", "pct"), ("n_not_longest", "n", "int"),
            ("delta", "Delta (points)", "pct")], "length_bias",
            "Accuracy when the correct option is (strictly) the longest or not (Table 17)."))
        add("mcq", table_view(t["training_groups"], [
            ("group", "Group", "text"), ("n_personalities", "Personalities", "int"),
            ("avg_train_pairs", "Avg train pairs", "num1"), ("method", "Method", "text"),
            ("n_options", "Options", "int"), ("accuracy", "Accuracy %", "pct"), ("reward", "Reward", "num3"),
            ("n", "Items", "int")], "training_groups",
            "Accuracy and reward by training-data group: min(10, n) groups by training pairs (Tables 12 and 13)."))
    if s["memory_ablation"].status == "ok":
        add("memory_ablation", leaderboard_view(s["memory_ablation"].tables["memory_ablation"], "memory_ablation"))
    if s["cost"].status == "ok":
        c = s["cost"].tables["cost"]
        add("cost", table_view(c, [
            ("method", "Method", "text"), ("n_questions", "Held-out questions", "int"),
            ("context_pairs_per_question", "Context pairs / q", "num1"),
            ("prompt_tokens_per_question", "Prompt tokens / q", "num1"),
            ("completion_tokens_per_question", "Completion tokens / q", "num1"),
            ("generation_cost_per_question", "Generation cost / q", "usd"), ("mcq_cost", "MCQ cost", "usd"),
            ("judge_cost", "Judge cost (all judges)", "usd"), ("total_cost_per_question", "Total cost / q", "usd"),
            ("cache_hit_share", "Cache hits %", "pct"),
            ("cached_prompt_tokens", "Prompt tokens from provider cache", "int"),
            ("uncached_prompt_tokens", "Prompt tokens at full rate", "int")], "cost"))
        uri, xlabel = plots.frontier_plot(c, view_rows(board, "common"))
        fig("cost", uri, f"Content Similarity against {xlabel}; dashed: methods nothing else beats at lower cost.")
    if s["validity"].status == "ok":
        add("validity", table_view(s["validity"].tables["validity"], [
            ("contract", "Contract", "text"), ("constraint", "Constraint sent", "text"),
            ("outputs", "Outputs", "int"), ("ok", "Valid", "int"), ("invalid", "Invalid", "int"),
            ("failed", "Failed", "int"), ("truncated", "Truncated", "int"),
            ("valid_share", "Valid %", "pct")], "validity"))
    if s["overlap"].status == "ok":
        t = s["overlap"].tables
        add("overlap", table_view(t["summary"], [
            ("embedder", "Embedder", "text"), ("n_questions", "Held-out questions", "int"),
            ("mean_best_similarity", "Mean best similarity", "num3"),
            ("median_best_similarity", "Median", "num3"), ("share_above_0_8", "Share > 0.8", "pct")], "overlap_summary"))
        fig("overlap", plots.overlap_plot(t["strata"]), "Content Similarity per overlap tercile.")
        st = t["strata"].assign(judge=lambda d: d["judge"].fillna("(MCQ, any)"), metric_key=lambda d: d["metric"],
                                metric=lambda d: d["metric"].map(_metric_name))
        add("overlap", table_view(st, [
            ("metric", "Metric", "text"), ("judge", "Judge", "text"), ("method", "Method", "text"),
            ("tercile", "Tercile", "text"), ("value", "Value", IN_METRIC_UNIT), ("n", "Questions", "int"),
            ("similarity_low", "Similarity from", "num3"), ("similarity_high", "to", "num3")], "overlap_strata",
            "Values in the metric's unit (CR and MCQ accuracy in %)."))
        views["overlap"]["tables"][-1].collapsed = True
        add("overlap", table_view(t["closest"], [
            ("personality_id", "Personality", "text"), ("qa_id", "Held-out question id", "text"),
            ("question", "Question", "text"), ("best_similarity", "Best similarity", "num3"),
            ("tercile", "Tercile", "text")], "overlap_closest",
            "The held-out questions closest to a training question (near-duplicates inflate retrieval scores)."))
        views["overlap"]["tables"][-1].collapsed = True
    if s["premise"].status == "ok":
        t = s["premise"].tables
        add("premise", table_view(t["attribution_split"], [
            ("attribution", "Attribution", "text"), ("count", "Count", "int"), ("share", "Share %", "pct"),
            ("dominant", "Dominant in (conclusions)", "int"), ("dominant_share", "Dominant share %", "pct")],
            "attribution_split", "Failure attribution over FAILed conclusions (seed 002's first number)."))
        rate_cols = [("n", "n", "int"), ("n_pass", "PASS", "int"), ("n_fail", "FAIL", "int"),
                     ("n_invalid", "INVALID", "int"), ("n_error", "ERROR", "int"),
                     ("pass_rate", "Pass rate %", "pct"), ("pass_rate_ci_low", "CI low", "pct"),
                     ("pass_rate_ci_high", "CI high", "pct"), ("mean_decontextuality", "Decontextuality", "num3")]
        add("premise", table_view(t["overall"], [("group", "", "text")] + rate_cols, "premise_overall"))
        add("premise", table_view(t["by_artifact_kind"], [("artifact_kind", "Artifact", "text")] + rate_cols,
                                  "premise_by_kind"))
        add("premise", table_view(t["by_personality"], [("personality_id", "Personality", "text")] + rate_cols,
                                  "premise_by_personality"))
        if not t["label_clusters"].empty:
            add("premise", table_view(t["label_clusters"], [
                ("rank", "#", "int"), ("representative", "Label cluster", "text"), ("size", "Labels", "int"),
                ("n_conclusions", "Conclusions", "int"), ("members", "Members", "text"),
                ("examples", "Examples", "text")], "label_clusters", "Free-text failure labels, clustered offline."))
    return views


def render_html(data: ReportData) -> str:
    """The whole page as a string (autoescaped; figures are data URIs)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(TEMPLATE).render(meta=data.meta, sections=data.sections, views=_section_views(data),
                                             premise_cc=data.sections["premise"].extra.get("cross_check"),
                                             intended_use=INTENDED_USE, fmt=fmt,
                                             explorer=explorer_command(data.meta.get("data_root")))
