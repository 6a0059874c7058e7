"""Static plots as PNG data URIs, so the HTML report is one file that opens with no network.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas directly, never through
pyplot: no global figure state, no GUI backend, safe in a Dagster worker thread.
"""

from __future__ import annotations

import base64
import io
from typing import Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .catalog import METRICS, metric, order_methods

__all__ = ["png_data_uri", "metrics_plot", "breakdown_plot", "mcq_distribution_plot", "frontier_plot",
           "overlap_plot", "method_colors", "tradeoff_plot"]

_KIND_COLORS = {"correct": "#2e7d32", "opposite_negation": "#c62828", "near_miss": "#f9a825",
                "plausible_misconception": "#ef6c00", "invalid": "#9e9e9e"}
_JUDGE_HATCH = ("", "//", "..", "xx", "\\\\")


def method_colors(methods: Sequence[str]) -> dict[str, str]:
    """A stable colour per method (same colour in every plot of one report)."""
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf", "#393b79", "#637939"]
    return {m: palette[i % len(palette)] for i, m in enumerate(order_methods(methods))}


def png_data_uri(fig: Figure, dpi: int = 110) -> str:
    """Render ``fig`` to a base64 PNG ``data:`` URI."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _style(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)


def _label(ax, xlabel: str, ylabel: str, title: str) -> None:
    """A per-judge line or scatter panel's labels, ticks and full grid, one look for every such figure."""
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(color="#e0e0e0", linewidth=0.6)


def metrics_plot(board: pd.DataFrame) -> str | None:
    """One panel per metric: methods as rows, one bar per judge, 95% CI whiskers."""
    if board.empty:
        return None
    methods = order_methods(board["method"])
    keys = [m.key for m in METRICS if board.loc[board["metric"] == m.key, "value"].notna().any()]
    judges = sorted(board["judge"].dropna().unique())
    # Nothing to draw (every value empty: all invalid, failed or not run) or judged values without a
    # judge: no figure; the table beside it says why each cell is empty.
    keys = [k for k in keys if judges or not metric(k).judged]
    if not keys:
        return None
    colors = method_colors(methods)
    ncol = min(4, len(keys))
    nrow = -(-len(keys) // ncol)
    fig = Figure(figsize=(3.6 * ncol, 0.45 * len(methods) * max(1, len(judges)) * nrow + 1.2 * nrow))
    for i, key in enumerate(keys):
        m = metric(key)
        ax = fig.add_subplot(nrow, ncol, i + 1)
        sub = board[board["metric"] == key]
        groups = judges if m.judged else [None]
        h = 0.8 / len(groups)
        scale = 100.0 if m.percent else 1.0
        for gi, judge in enumerate(groups):
            part = sub[sub["judge"] == judge] if judge is not None else sub[sub["judge"].isna()]
            part = part.set_index("method").reindex(methods)
            y = np.arange(len(methods)) + (gi - (len(groups) - 1) / 2) * h
            val = part["value"].to_numpy(dtype=float) * scale
            lo = np.clip(val - part["ci_low"].to_numpy(dtype=float) * scale, 0, None)
            hi = np.clip(part["ci_high"].to_numpy(dtype=float) * scale - val, 0, None)
            err = np.nan_to_num(np.vstack([lo, hi]))
            ax.barh(y, np.nan_to_num(val), height=h * 0.9, color=[colors[x] for x in methods],
                    hatch=_JUDGE_HATCH[gi % len(_JUDGE_HATCH)], edgecolor="white", linewidth=0.5,
                    xerr=err, error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333"},
                    label=judge if judge is not None else None)
        ax.set_yticks(np.arange(len(methods)), methods, fontsize=8)
        ax.invert_yaxis()
        ax.set_title(m.label, fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        _style(ax)
        if m.judged and len(judges) > 1 and i == 0:
            ax.legend(fontsize=7, title="judge (hatch)", title_fontsize=7, loc="lower right")
    fig.tight_layout()
    return png_data_uri(fig)


def breakdown_plot(df: pd.DataFrame, title: str) -> str | None:
    """Contradiction ratio per group (tag or category): one panel per judge, bars per method."""
    if df.empty:
        return None
    judges = sorted(df["judge"].unique())
    methods = order_methods(df["method"])
    groups = sorted(df["group"].unique())
    colors = method_colors(methods)
    fig = Figure(figsize=(max(6.0, 1.3 * len(groups) * max(1, len(methods)) ** 0.5 + 2), 3.2 * len(judges)))
    w = 0.8 / len(methods)
    for ji, judge in enumerate(judges):
        ax = fig.add_subplot(len(judges), 1, ji + 1)
        sub = df[df["judge"] == judge]
        for mi, method in enumerate(methods):
            part = sub[sub["method"] == method].set_index("group").reindex(groups)
            x = np.arange(len(groups)) + (mi - (len(methods) - 1) / 2) * w
            ax.bar(x, np.nan_to_num(part["contradiction_ratio"].to_numpy(dtype=float) * 100), width=w * 0.9,
                   color=colors[method], label=method)
        ax.set_xticks(np.arange(len(groups)), groups, fontsize=8)
        ax.set_ylabel("Contradiction ratio (%)", fontsize=8)
        ax.set_title(f"{title} - judge {judge}", fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(axis="y", color="#e0e0e0", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.legend(fontsize=7, ncol=min(4, len(methods)), frameon=False)
    fig.tight_layout()
    return png_data_uri(fig)


def mcq_distribution_plot(dist: pd.DataFrame) -> str | None:
    """Stacked share of chosen option kinds per method, one panel per option count."""
    if dist.empty:
        return None
    options = sorted(dist["n_options"].unique())
    methods = order_methods(dist["method"])
    fig = Figure(figsize=(6.2 * len(options), 0.42 * len(methods) + 1.4))
    for oi, n_opt in enumerate(options):
        ax = fig.add_subplot(1, len(options), oi + 1)
        sub = dist[dist["n_options"] == n_opt]
        left = np.zeros(len(methods))
        for kind, color in _KIND_COLORS.items():
            part = sub[sub["kind"] == kind].set_index("method").reindex(methods)
            if part["share"].isna().all():
                continue
            share = np.nan_to_num(part["share"].to_numpy(dtype=float) * 100)
            ax.barh(methods, share, left=left, color=color, label=kind.replace("_", " "), height=0.7)
            left += share
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of answers (%)", fontsize=8)
        ax.set_title(f"{n_opt}-option predictions by option kind", fontsize=9)
        ax.tick_params(labelsize=8)
        _style(ax)
        ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)
    fig.tight_layout()
    return png_data_uri(fig)


def _pareto(x: np.ndarray, y: np.ndarray) -> list[int]:
    """Indices on the cost-quality frontier: nothing else is at least as cheap and strictly better."""
    order = sorted(range(len(x)), key=lambda i: (x[i], -y[i]))
    best, out = -np.inf, []
    for i in order:
        if y[i] > best:
            out.append(i)
            best = y[i]
    return out


def frontier_plot(cost: pd.DataFrame, board: pd.DataFrame) -> tuple[str | None, str]:
    """Content Similarity against cost per held-out question, one panel per judge, frontier drawn.

    Returns the data URI and the x quantity used: total cost in USD when any is non-zero, else
    generation prompt tokens per question (the offline model costs nothing).
    """
    cs = board[board["metric"] == "cs_mean"] if not board.empty else board
    if cost.empty or cs.empty:
        return None, ""
    use_cost = bool((cost["total_cost_per_question"] > 0).any())
    xcol = "total_cost_per_question" if use_cost else "prompt_tokens_per_question"
    xlabel = "total cost per held-out question (USD)" if use_cost else "prompt tokens per held-out question"
    judges = sorted(cs["judge"].dropna().unique())
    if not judges or cs["value"].isna().all():
        return None, ""
    colors = method_colors(cost["method"])
    fig = Figure(figsize=(5.0 * len(judges), 3.8))
    for ji, judge in enumerate(judges):
        ax = fig.add_subplot(1, len(judges), ji + 1)
        pts = cost.merge(cs[cs["judge"] == judge][["method", "value"]], on="method").dropna(subset=["value"])
        if pts.empty:
            continue
        x, y = pts[xcol].to_numpy(dtype=float), pts["value"].to_numpy(dtype=float)
        for xi, yi, m in zip(x, y, pts["method"]):
            ax.scatter([xi], [yi], s=46, color=colors[m], zorder=3)
            ax.annotate(m, (xi, yi), textcoords="offset points", xytext=(5, 4), fontsize=7)
        front = _pareto(x, y)
        ax.plot(x[front], y[front], color="#555", linestyle="--", linewidth=1, zorder=2, label="frontier")
        if not use_cost and (x > 0).all() and x.max() / max(x.min(), 1e-9) > 20:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel("Content Similarity (1-5)", fontsize=8)
        ax.set_title(f"Cost-quality frontier - judge {judge}", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(color="#e0e0e0", linewidth=0.6)
        ax.legend(fontsize=7, frameon=False, loc="lower right")
    fig.tight_layout()
    return png_data_uri(fig), xlabel


def overlap_plot(strata: pd.DataFrame) -> str | None:
    """Content Similarity per overlap tercile, a line per method, one panel per judge."""
    cs = strata[strata["metric"] == "cs_mean"] if not strata.empty else strata
    if cs.empty:
        return None
    judges = sorted(cs["judge"].dropna().unique())
    colors = method_colors(cs["method"])
    fig = Figure(figsize=(4.6 * len(judges), 3.4))
    terciles = ["low", "mid", "high"]
    for ji, judge in enumerate(judges):
        ax = fig.add_subplot(1, len(judges), ji + 1)
        sub = cs[cs["judge"] == judge]
        for method in order_methods(sub["method"]):
            part = sub[sub["method"] == method].set_index("tercile").reindex(terciles)
            ax.plot(terciles, part["value"].to_numpy(dtype=float), marker="o", color=colors[method], label=method)
        _label(ax, "train-test question similarity tercile", "Content Similarity (1-5)",
               f"CS by topical overlap - judge {judge}")
        ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return png_data_uri(fig)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h")


def tradeoff_plot(by_generator: pd.DataFrame) -> str | None:
    """Each generator's trade-off, as the paper plots methods: Content Similarity against Contradiction Ratio (%),
    one panel per judge, one point per (generator, method) from the generator x method table
    (``generators.generator_table``): colour per generator, marker and label per method, a generator's methods
    joined in the paper's order so its curve reads at a glance. None without two generators or without a CS and
    CR value under a judge."""
    if by_generator.empty:
        return None
    gens = list(dict.fromkeys(by_generator["generator"]))  # the table's order: the first generator first
    if len(gens) < 2:
        return None
    wide = by_generator[by_generator["metric"].isin(["cs_mean", "contradiction_ratio"])].pivot_table(
        index=["judge", "generator", "method"], columns="metric", values="value", aggfunc="first")
    if not {"cs_mean", "contradiction_ratio"} <= set(wide.columns):
        return None
    wide = wide.dropna(subset=["cs_mean", "contradiction_ratio"]).reset_index()
    judges = sorted(wide["judge"].unique())
    if not judges:
        return None
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
    colors = {g: palette[i % len(palette)] for i, g in enumerate(gens)}
    methods = order_methods(wide["method"])
    markers = {m: _MARKERS[i % len(_MARKERS)] for i, m in enumerate(methods)}
    fig = Figure(figsize=(5.2 * len(judges), 4.2))
    for ji, judge in enumerate(judges):
        ax = fig.add_subplot(1, len(judges), ji + 1)
        sub = wide[wide["judge"] == judge]
        for g in gens:
            part = sub[sub["generator"] == g].set_index("method")
            pts = part.reindex([m for m in methods if m in part.index])
            if pts.empty:
                continue
            x, y = pts["contradiction_ratio"].to_numpy(dtype=float) * 100, pts["cs_mean"].to_numpy(dtype=float)
            ax.plot(x, y, color=colors[g], linewidth=0.8, alpha=0.5, zorder=2)
            for xi, yi, m in zip(x, y, pts.index):
                ax.scatter([xi], [yi], s=46, color=colors[g], marker=markers[m], zorder=3,
                           label=g if m == pts.index[0] else None)
                ax.annotate(m, (xi, yi), textcoords="offset points", xytext=(5, 4), fontsize=7)
        _label(ax, "Contradiction Ratio (%, lower better)", "Content Similarity (1-5, higher better)",
               f"Generators' trade-off - judge {judge}")
        ax.legend(fontsize=7, frameon=False, title="generator", title_fontsize=7)
    fig.tight_layout()
    return png_data_uri(fig)
