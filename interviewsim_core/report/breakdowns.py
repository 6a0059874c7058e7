"""Where methods fail: contradiction ratio by question tag (the paper's Figure 3a) and by
personality category (Figure 3b), and the memory ablation (Table 2).

Tag and category ratios are pooled over judged answers (Contradiction judgments / all valid FC
judgments in the cell), as the paper's figure is: a per-personality macro average over a tag
would give a personality with one Social Identity question the same weight as one with forty.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import ConfigError
from .catalog import JUDGED_METRICS, MCQ_METRICS, order_methods
from .leaderboard import mark_best

__all__ = ["BREAKDOWN_COLUMNS", "ABLATION_METHODS", "question_tags", "by_tag", "by_category", "load_categories",
           "categories_from_tags", "memory_ablation"]

BREAKDOWN_COLUMNS = ["method", "judge", "group", "contradiction_ratio", "n_judged", "n_contradiction", "cs_mean", "n_cs"]
ABLATION_METHODS = ("random-100", "memory-10", "memory-50", "memory-100")


def question_tags(heldout: pd.DataFrame) -> pd.DataFrame:
    """(personality_id, qa_id, tag) for every held-out question; untagged ones get "(untagged)"."""
    test = heldout[heldout["partition"] == "test"] if not heldout.empty else heldout
    rows = [(p, q, t) for p, q, tags in zip(test.get("personality_id", []), test.get("qa_id", []), test.get("tags", []))
            for t in (list(tags) if tags is not None and len(tags) else ["(untagged)"])]
    return pd.DataFrame(rows, columns=["personality_id", "qa_id", "tag"])


def _pooled(fc: pd.DataFrame, cs: pd.DataFrame, groups: pd.DataFrame, on: list[str], name: str) -> pd.DataFrame:
    fc_ok = fc[fc["status"] == "ok"] if not fc.empty else fc
    cs_ok = cs[cs["status"] == "ok"] if not cs.empty else cs
    if fc_ok.empty or groups.empty:
        return pd.DataFrame(columns=BREAKDOWN_COLUMNS)
    f = fc_ok.merge(groups, on=on, how="inner").assign(contra=lambda d: (d["label"] == "Contradiction").astype(int))
    fagg = f.groupby(["method", "judge", name], sort=True).agg(
        n_judged=("contra", "size"), n_contradiction=("contra", "sum")).reset_index()
    fagg["contradiction_ratio"] = fagg["n_contradiction"] / fagg["n_judged"]
    if not cs_ok.empty:
        c = cs_ok.merge(groups, on=on, how="inner")
        cagg = c.groupby(["method", "judge", name], sort=True).agg(
            cs_mean=("score", "mean"), n_cs=("score", "size")).reset_index()
        fagg = fagg.merge(cagg, on=["method", "judge", name], how="left")
    else:
        fagg["cs_mean"], fagg["n_cs"] = float("nan"), 0
    fagg = fagg.rename(columns={name: "group"})
    rank = {m: i for i, m in enumerate(order_methods(fagg["method"]))}
    fagg = fagg.sort_values(["judge", "group", "method"], key=lambda s: s.map(rank) if s.name == "method" else s)
    return fagg[BREAKDOWN_COLUMNS].reset_index(drop=True)


def by_tag(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Contradiction ratio (and CS) per method, judge and question tag; a multi-tag question counts under each tag."""
    return _pooled(tables["factual_consistency"], tables["content_similarity"],
                   question_tags(tables["heldout_split"]), ["personality_id", "qa_id"], "tag")


def load_categories(path: Path | str) -> pd.DataFrame:
    """The optional personality metadata file: a CSV with columns personality_id, category.

    Raises:
        ConfigError: the file lacks a column, or gives one personality two categories.
    """
    df = pd.read_csv(path, dtype=str).fillna("")
    missing = {"personality_id", "category"} - set(df.columns)
    if missing:
        raise ConfigError(f"{path}: categories CSV needs columns personality_id, category; missing {sorted(missing)}")
    df = df[["personality_id", "category"]].apply(lambda s: s.str.strip()).drop_duplicates()
    dup = df["personality_id"][df["personality_id"].duplicated()].unique().tolist()
    if dup:
        raise ConfigError(f"{path}: personalities with more than one category: {dup}")
    return df[df["category"] != ""].reset_index(drop=True)


def categories_from_tags(qa_tags: pd.DataFrame) -> pd.DataFrame:
    """(personality_id, category) from the curation's ``qa_tags`` table, which repeats each personality's
    category on every one of its transcripts' rows: what the data root itself says, so ``interviewsim
    report --data-root DIR`` needs no ``--categories`` after a run that curated (the demo's, the UI's).
    A personality without a category (the tagging step not reached, or refused) is left out."""
    if qa_tags.empty or "category" not in qa_tags.columns:
        return pd.DataFrame(columns=["personality_id", "category"])
    df = qa_tags[["personality_id", "category"]].dropna().astype(str)
    df = df[df["category"].str.strip() != ""].drop_duplicates("personality_id", keep="last")
    return df.sort_values("personality_id").reset_index(drop=True)


def by_category(tables: dict[str, pd.DataFrame], categories: pd.DataFrame) -> pd.DataFrame:
    """Contradiction ratio (and CS) per method, judge and personality category."""
    return _pooled(tables["factual_consistency"], tables["content_similarity"], categories,
                   ["personality_id"], "category")


def memory_ablation(board: pd.DataFrame) -> pd.DataFrame:
    """Table 2: the leaderboard rows of random-100 and memory-10/50/100 (those that ran).

    Empty unless at least two of them ran: one variant alone is not an ablation.
    """
    if board.empty:
        return board
    present = [m for m in ABLATION_METHODS if m in set(board["method"])]
    if len(present) < 2:
        return board.iloc[0:0]
    sub = board[board["method"].isin(present)].drop(columns=["best"])
    return mark_best(sub, JUDGED_METRICS + MCQ_METRICS).reset_index(drop=True)
