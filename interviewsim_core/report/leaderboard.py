"""The paper's Table 1 for any corpus: macro averages over personalities, per method and judge.

Each per-personality value in ``method_scores`` counts once (macro average), so a personality
with many held-out questions does not outweigh one with few. Judged metrics are reported per
judge and never averaged across judges: their calibrations differ (the paper's CS is 3.27 under
one judge and 2.21 under another for the same responses). MCQ is exact-match, identical on every
judge's row, so it is computed once per method.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics.scores import CI_N_RESAMPLES, macro_interval
from .catalog import JUDGED_METRICS, MCQ_METRICS, Metric, fmt, is_missing, order_methods

__all__ = ["LEADERBOARD_COLUMNS", "leaderboard", "mcq_rows", "mark_best", "invalid_counts", "leaderboard_markdown_table"]

LEADERBOARD_COLUMNS = ["method", "judge", "metric", "value", "ci_low", "ci_high", "n_personalities", "best"]
N_RESAMPLES = CI_N_RESAMPLES


def mcq_rows(method_scores: pd.DataFrame) -> pd.DataFrame:
    """One ``method_scores`` row per (personality, method): MCQ columns repeat on every judge's row."""
    if method_scores.empty:
        return method_scores
    return method_scores.sort_values("judge", kind="stable").drop_duplicates(["personality_id", "method"])


def _cell(values: pd.Series, seed: int, n_resamples: int) -> dict:
    # The same interval as the pipeline's leaderboard.parquet (metrics.scores.macro_average).
    ci = macro_interval(values.astype(float).to_numpy(), seed=seed, n_resamples=n_resamples)
    return {"value": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "n_personalities": ci.n}


def mark_best(df: pd.DataFrame, metrics: tuple[Metric, ...]) -> pd.DataFrame:
    """Set ``best`` on the numerically best method per (judge, metric); ties are all marked."""
    out = df.copy()
    out["best"] = False
    for m in metrics:
        for _, grp in out[out["metric"] == m.key].groupby(out["judge"].fillna(""), sort=False):
            vals = grp["value"].astype(float)
            vals = vals[~vals.isna()]
            if vals.empty:
                continue
            target = vals.max() if m.higher_is_better else vals.min()
            out.loc[vals.index[np.isclose(vals.to_numpy(), target, rtol=0, atol=1e-12)], "best"] = True
    return out


def leaderboard(method_scores: pd.DataFrame, seed: int = 0, n_resamples: int = N_RESAMPLES) -> pd.DataFrame:
    """Long table: one row per (method, judge, metric) with the macro mean, its 95% CI and ``best``.

    MCQ rows have ``judge`` None. A personality without a value for a metric (all its judgments
    invalid, or that option count not run) is left out of that metric's mean, not counted as zero.
    """
    if method_scores.empty:
        return pd.DataFrame(columns=LEADERBOARD_COLUMNS)
    rows = []
    for (method, judge), grp in method_scores.groupby(["method", "judge"], sort=True):
        for m in JUDGED_METRICS:
            rows.append({"method": method, "judge": judge, "metric": m.key, **_cell(grp[m.key], seed, n_resamples)})
    for method, grp in mcq_rows(method_scores).groupby("method", sort=True):
        for m in MCQ_METRICS:
            rows.append({"method": method, "judge": None, "metric": m.key, **_cell(grp[m.key], seed, n_resamples)})
    df = pd.DataFrame(rows)
    df = mark_best(df, JUDGED_METRICS + MCQ_METRICS)
    rank = {m: i for i, m in enumerate(order_methods(df["method"]))}
    mrank = {m.key: i for i, m in enumerate(JUDGED_METRICS + MCQ_METRICS)}
    df = df.sort_values(["metric", "judge", "method"], kind="stable", na_position="first",
                        key=lambda s: s.map(rank) if s.name == "method" else (s.map(mrank) if s.name == "metric" else s))
    return df[LEADERBOARD_COLUMNS].reset_index(drop=True)


def invalid_counts(method_scores: pd.DataFrame) -> pd.DataFrame:
    """Invalid judge outputs per method and judge: left out of the means, so a reader must see them."""
    cols = ["method", "judge", "cs_invalid", "fc_invalid", "ps_invalid", "mcq_invalid", "cs_n", "fc_n"]
    if method_scores.empty:
        return pd.DataFrame(columns=cols)
    out = method_scores.groupby(["method", "judge"], sort=True)[cols[2:]].sum().reset_index()
    return out[cols]


def leaderboard_markdown_table(board: pd.DataFrame, with_ci: bool = False) -> str:
    """Table 1 as markdown: methods as rows, one column per (judged metric, judge), then MCQ; best in bold."""
    if board.empty:
        return "_No method scores: the evaluation has not run._"
    judges = sorted(j for j in board["judge"].dropna().unique())
    methods = order_methods(board["method"])
    present = set(board["metric"])
    columns: list[tuple[Metric, str | None]] = [(m, j) for m in JUDGED_METRICS for j in judges if m.key in present]
    columns += [(m, None) for m in MCQ_METRICS if m.key in present]
    index = {(r.method, r.judge if isinstance(r.judge, str) else None, r.metric): r for r in board.itertuples()}
    head = ["Method"] + [f"{m.short} ({j})" if j else m.short for m, j in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in methods:
        cells = [method]
        for m, j in columns:
            r = index.get((method, j, m.key))
            if r is None or is_missing(r.value):
                cells.append("–")
                continue
            text = fmt(r.value, m.key)
            if with_ci and not is_missing(r.ci_low):
                text += f" [{fmt(r.ci_low, m.key)}, {fmt(r.ci_high, m.key)}]"
            cells.append(f"**{text}**" if r.best else text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
