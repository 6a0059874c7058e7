"""Train-test topical overlap (the paper's Appendix D concern): repeated topics across interviews
can inflate scores, retrieval methods most, since they fetch the near-duplicate question.

Each held-out question gets its best cosine similarity to any training question of the same
personality (through an ``Embedder``; ``HashingEmbedder`` offline by default). Questions are cut
into terciles of that similarity over the whole corpus, and the metrics are recomputed per
tercile: a method whose advantage lives only in the high-overlap tercile is recalling, not simulating.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..embeddings import Embedder, HashingEmbedder
from .catalog import order_methods

__all__ = ["TERCILES", "question_overlap", "overlap_strata"]

TERCILES = ("low", "mid", "high")


def question_overlap(heldout: pd.DataFrame, embedder: Embedder | None = None) -> pd.DataFrame:
    """(personality_id, qa_id, best_similarity, tercile) per held-out question.

    Terciles are rank-based (ties broken by table order), so they hold equal counts even when
    many similarities are equal. A personality without training questions gets NaN and no tercile.
    """
    cols = ["personality_id", "qa_id", "best_similarity", "tercile"]
    if heldout.empty:
        return pd.DataFrame(columns=cols)
    emb = embedder if embedder is not None else HashingEmbedder()
    rows = []
    for pid, grp in heldout.groupby("personality_id", sort=True):
        train = grp[grp["partition"] == "train"]
        test = grp[grp["partition"] == "test"].sort_values("order", kind="stable")
        if test.empty:
            continue
        if train.empty:
            best = np.full(len(test), np.nan)
        else:
            vecs = emb.embed(list(train["question"]) + list(test["question"]))
            sims = vecs[len(train):] @ vecs[: len(train)].T
            best = sims.max(axis=1).astype(float)
        rows.extend(zip([pid] * len(test), test["qa_id"], best))
    df = pd.DataFrame(rows, columns=cols[:3])
    df["tercile"] = None
    known = df["best_similarity"].notna()
    if known.sum() >= 3:
        ranks = df.loc[known, "best_similarity"].rank(method="first")
        df.loc[known, "tercile"] = pd.qcut(ranks, 3, labels=list(TERCILES)).astype(str)
    return df


def overlap_strata(tables: dict[str, pd.DataFrame], overlap: pd.DataFrame) -> pd.DataFrame:
    """CS mean and contradiction ratio per (method, judge, tercile), and MCQ accuracy per
    (method, tercile) with ``judge`` None; pooled over the questions of each tercile."""
    cols = ["method", "judge", "tercile", "metric", "value", "n", "similarity_low", "similarity_high"]
    ov = overlap.dropna(subset=["tercile"])
    if ov.empty:
        return pd.DataFrame(columns=cols)
    bounds = ov.groupby("tercile")["best_similarity"].agg(["min", "max"])
    rows = []

    def add(frame: pd.DataFrame, value_col: str, metric: str, by: list[str]) -> None:
        joined = frame.merge(ov[["personality_id", "qa_id", "tercile"]], on=["personality_id", "qa_id"])
        for key, grp in joined.groupby(by + ["tercile"], sort=True):
            method, judge, terc = (key[0], key[1], key[2]) if len(by) == 2 else (key[0], None, key[1])
            rows.append({"method": method, "judge": judge, "tercile": terc, "metric": metric,
                         "value": float(grp[value_col].astype(float).mean()), "n": len(grp),
                         "similarity_low": float(bounds.loc[terc, "min"]),
                         "similarity_high": float(bounds.loc[terc, "max"])})

    cs, fc, mcq = tables["content_similarity"], tables["factual_consistency"], tables["mcq_answers"]
    if not cs.empty:
        add(cs[cs["status"] == "ok"], "score", "cs_mean", ["method", "judge"])
    if not fc.empty:
        ok = fc[fc["status"] == "ok"]
        add(ok.assign(contra=(ok["label"] == "Contradiction").astype(float)), "contra", "contradiction_ratio",
            ["method", "judge"])
    if not mcq.empty:
        scored = mcq[mcq["reward"].notna()]
        for n_opt in sorted(scored["n_options"].unique()):
            add(scored[scored["n_options"] == n_opt].assign(acc=lambda d: d["correct"].astype(float)), "acc",
                f"mcq{int(n_opt)}_accuracy", ["method"])
    out = pd.DataFrame(rows, columns=cols)
    if out.empty:
        return out
    rank = {m: i for i, m in enumerate(order_methods(out["method"]))}
    trank = {t: i for i, t in enumerate(TERCILES)}
    return out.sort_values(["metric", "judge", "method", "tercile"], na_position="first",
                           key=lambda s: s.map(rank) if s.name == "method" else (
                               s.map(trank) if s.name == "tercile" else s)).reset_index(drop=True)
