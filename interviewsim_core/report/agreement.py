"""How much the judges agree on the same items: which judge's numbers a reader can trust.

None of the paper's anchors report this. Every pair of judges is compared on the items both
judged validly: FC labels (3-way kappa, and binary Contradiction vs. not, the reported metric),
CS scores (linearly weighted kappa over 1..5 and Spearman), PS trait levels (modal level per
trait and response collection; exact agreement and weighted kappa over Low < Neutral < High).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from ..contracts.personality import LEVELS, N_VOTES, modal_vote
from ..metrics.statistics import cohen_kappa, spearman

__all__ = ["AGREEMENT_COLUMNS", "judge_agreement", "ps_levels"]

AGREEMENT_COLUMNS = ["judge_a", "judge_b", "measure", "items", "n", "agreement", "kappa", "spearman"]
FC_LABELS = ("Entailment", "Neutral", "Contradiction")
CS_SCORES = (1, 2, 3, 4, 5)


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["status"] == "ok"] if not df.empty else df


def _paired(df: pd.DataFrame, keys: list[str], value: str, a: str, b: str) -> pd.DataFrame:
    left = df[df["judge"] == a].set_index(keys)[value].rename("a")
    right = df[df["judge"] == b].set_index(keys)[value].rename("b")
    return pd.concat([left, right], axis=1, join="inner").dropna()


def ps_levels(reference: pd.DataFrame, generated: pd.DataFrame) -> pd.DataFrame:
    """Modal level per (judge, side, personality, method, trait) where all three votes are valid.

    ``side`` is "reference" (method "") or "generated"; a trait with an invalid vote has no level.
    """
    frames = []
    for side, df in (("reference", reference), ("generated", generated)):
        ok = _ok(df)
        if ok.empty:
            continue
        ok = ok.assign(side=side, method=ok["method"] if "method" in ok.columns else "")
        frames.append(ok[["judge", "side", "personality_id", "method", "trait", "vote_index", "rate"]])
    cols = ["judge", "side", "personality_id", "method", "trait", "level"]
    if not frames:
        return pd.DataFrame(columns=cols)
    votes = pd.concat(frames, ignore_index=True).sort_values("vote_index", kind="stable")
    rows = []
    for key, grp in votes.groupby(cols[:-1], sort=True):
        if len(grp) == N_VOTES:
            rows.append((*key, modal_vote(list(grp["rate"]))[0]))
    return pd.DataFrame(rows, columns=cols)


def _row(a: str, b: str, measure: str, items: str, pairs: pd.DataFrame, kappa: float, rho: float = np.nan) -> dict:
    n = len(pairs)
    agree = float((pairs["a"] == pairs["b"]).mean()) if n else np.nan
    return {"judge_a": a, "judge_b": b, "measure": measure, "items": items, "n": n,
            "agreement": agree, "kappa": kappa, "spearman": rho}


def judge_agreement(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (judge pair, measure); empty when fewer than two judges judged anything."""
    cs, fc = _ok(tables["content_similarity"]), _ok(tables["factual_consistency"])
    levels = ps_levels(tables["reference_personality"], tables["generated_personality"])
    judges = sorted(set(cs.get("judge", [])) | set(fc.get("judge", [])) | set(levels["judge"]))
    keys = ["personality_id", "method", "qa_id"]
    rows = []
    for a, b in combinations(judges, 2):
        p = _paired(fc, keys, "label", a, b) if not fc.empty else pd.DataFrame(columns=["a", "b"])
        k3 = cohen_kappa(p["a"], p["b"], labels=FC_LABELS) if len(p) else np.nan
        rows.append(_row(a, b, "FC label (3-way)", "generated answers", p, k3))
        pb = (p == "Contradiction").astype(int) if len(p) else p
        kb = cohen_kappa(pb["a"], pb["b"], labels=(0, 1)) if len(p) else np.nan
        rows.append(_row(a, b, "FC Contradiction vs. not", "generated answers", pb, kb))
        p = _paired(cs, keys, "score", a, b).astype(int) if not cs.empty else pd.DataFrame(columns=["a", "b"])
        kw = cohen_kappa(p["a"], p["b"], weights="linear", labels=CS_SCORES) if len(p) else np.nan
        rho = spearman(p["a"], p["b"])[0] if len(p) else np.nan
        rows.append(_row(a, b, "CS score (weighted kappa)", "generated answers", p, kw, rho))
        p = _paired(levels, ["side", "personality_id", "method", "trait"], "level", a, b)
        kl = cohen_kappa(p["a"], p["b"], weights="linear", labels=LEVELS) if len(p) else np.nan
        rows.append(_row(a, b, "PS trait level", "trait x response collection", p, kl))
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)
