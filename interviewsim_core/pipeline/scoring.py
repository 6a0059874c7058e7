"""Per-personality aggregates (``method_scores``) and their macro averages (``leaderboard``).

Aggregation rules are seed 000's: CS is the mean score, FC the share of Contradiction among all
valid FC judgments, PS the alignment of modal votes, MCQ accuracy and mean reward per option
count. Invalid judge outputs are counted (``*_invalid``) and left out of the means: a parse failure
is not a low score. MCQ is the exception the seed makes: a malformed reply scores -0.5 (and 0
accuracy), so those rows are in the MCQ means and also counted in ``mcq_invalid``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..contracts import personality
from ..llm.types import ModelConfig
from ..split import HeldOutSplit
from .tables import LEADERBOARD_METRICS, empty_frame, schema_of

_NAN = float("nan")


def _name(judge: ModelConfig | str) -> str:
    return judge if isinstance(judge, str) else judge.name


def _select(df: pd.DataFrame | None, **eq) -> pd.DataFrame:
    if df is None or df.empty:
        return df.iloc[0:0] if df is not None else pd.DataFrame()
    mask = np.ones(len(df), dtype=bool)
    for col, value in eq.items():
        mask &= (df[col] == value).to_numpy()
    return df[mask]


def _usage(df: pd.DataFrame) -> tuple[int, int, float]:
    if df.empty:
        return 0, 0, 0.0
    return int(df["prompt_tokens"].sum()), int(df["completion_tokens"].sum()), float(df["cost_usd"].sum())


def trait_levels(votes: pd.DataFrame) -> dict[str, str] | None:
    """Modal level per trait from one side's votes of one judge; None unless every trait has its three valid votes.

    A trait with an invalid vote has no defined modal level (guessing one would be inventing a
    judgment), and alignment needs all five traits, so the side is then unscored.
    """
    by_trait: dict[str, list[tuple[int, str]]] = {}
    for trait, vote, status, rate in zip(votes["trait"], votes["vote_index"], votes["status"], votes["rate"]):
        if status == "ok":
            by_trait.setdefault(trait, []).append((int(vote), rate))
    levels: dict[str, str] = {}
    for trait in personality.TRAITS:
        rates = [r for _, r in sorted(by_trait.get(trait, []))]
        if len(rates) != personality.N_VOTES:
            return None
        levels[trait] = personality.modal_vote(rates)[0]
    return levels


def score_method(
    split: HeldOutSplit,
    method_name: str,
    generations: pd.DataFrame,
    cs: pd.DataFrame,
    fc: pd.DataFrame,
    reference_ps: pd.DataFrame,
    generated_ps: pd.DataFrame,
    mcq_answers: pd.DataFrame,
    judges: Sequence[ModelConfig | str],
) -> pd.DataFrame:
    """The ``method_scores`` rows of one (personality, method): one per judge.

    Tokens and cost are what this (personality, method) cost for this judge's row: generation,
    MCQ answering, and this judge's CS, FC and generated-side PS calls (the reference side is
    per personality, not per method, and is not included).
    """
    pid = split.personality_id
    gens = _select(generations, personality_id=pid, method=method_name)
    answers = _select(mcq_answers, personality_id=pid, method=method_name)
    mcq: dict[str, float] = {}
    for n in (3, 4):
        scored = answers[(answers["n_options"] == n) & answers["reward"].notna()] if not answers.empty else answers
        mcq[f"mcq{n}_accuracy"] = float(scored["correct"].astype(float).mean()) if len(scored) else _NAN
        mcq[f"mcq{n}_reward"] = float(scored["reward"].astype(float).mean()) if len(scored) else _NAN
    mcq_invalid = int((answers["status"] != "ok").sum()) if not answers.empty else 0
    base_usage = np.add(_usage(gens), _usage(answers))

    rows = []
    for judge in judges:
        j = _name(judge)
        cs_j = _select(cs, personality_id=pid, method=method_name, judge=j)
        fc_j = _select(fc, personality_id=pid, method=method_name, judge=j)
        ref_j = _select(reference_ps, personality_id=pid, judge=j)
        gen_j = _select(generated_ps, personality_id=pid, method=method_name, judge=j)

        cs_ok = cs_j[cs_j["status"] == "ok"] if not cs_j.empty else cs_j
        fc_ok = fc_j[fc_j["status"] == "ok"] if not fc_j.empty else fc_j
        ref_levels = trait_levels(ref_j) if not ref_j.empty else None
        gen_levels = trait_levels(gen_j) if not gen_j.empty else None
        ps = personality.alignment(ref_levels, gen_levels) if ref_levels and gen_levels else _NAN
        ps_invalid = sum(int((d["status"] != "ok").sum()) for d in (ref_j, gen_j) if not d.empty)

        usage = base_usage + np.add(np.add(_usage(cs_j), _usage(fc_j)), _usage(gen_j))
        rows.append({
            "personality_id": pid, "method": method_name, "judge": j,
            "cs_mean": float(cs_ok["score"].astype(float).mean()) if len(cs_ok) else _NAN,
            "cs_n": len(cs_ok), "cs_invalid": len(cs_j) - len(cs_ok),
            "contradiction_ratio": float((fc_ok["label"] == "Contradiction").mean()) if len(fc_ok) else _NAN,
            "fc_n": len(fc_ok), "fc_invalid": len(fc_j) - len(fc_ok),
            "ps_alignment": ps, "ps_invalid": ps_invalid,
            **mcq, "mcq_invalid": mcq_invalid,
            "n_test_questions": len(split.test_pairs), "n_train_pairs": len(split.train_pairs),
            "prompt_tokens": int(usage[0]), "completion_tokens": int(usage[1]), "cost_usd": float(usage[2]),
        })
    if not rows:
        return empty_frame("method_scores")
    return pd.DataFrame(rows, columns=schema_of("method_scores").names)


def bootstrap_ci(values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean over personalities; NaN when fewer than two values.

    One personality has no spread to resample, so its interval is undefined rather than zero-width.
    """
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
    if len(v) < 2:
        return _NAN, _NAN
    if np.all(v == v[0]):
        return float(v[0]), float(v[0])
    from scipy.stats import bootstrap

    res = bootstrap((v,), np.mean, n_resamples=n_resamples, confidence_level=confidence, method="percentile",
                    vectorized=True, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def build_leaderboard(method_scores_all: pd.DataFrame, *, seed: int = 0, n_resamples: int = 2000) -> pd.DataFrame:
    """Macro averages over personalities per (method, judge), each with a 95% bootstrap CI.

    A personality without a value for a metric (all its judgments invalid, or no 4-option run) is
    left out of that metric's average, not counted as zero.
    """
    if method_scores_all.empty:
        return empty_frame("leaderboard")
    rows = []
    for (method, judge), grp in method_scores_all.groupby(["method", "judge"], sort=True):
        row: dict = {"method": method, "judge": judge, "n_personalities": int(grp["personality_id"].nunique())}
        for m in LEADERBOARD_METRICS:
            vals = grp[m].astype(float).to_numpy()
            finite = vals[~np.isnan(vals)]
            row[m] = float(finite.mean()) if len(finite) else _NAN
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = bootstrap_ci(finite, n_resamples=n_resamples, seed=seed)
        for c in ("cs_invalid", "fc_invalid", "ps_invalid", "mcq_invalid", "prompt_tokens", "completion_tokens"):
            row[c] = int(grp[c].sum())
        row["cost_usd"] = float(grp["cost_usd"].sum())
        rows.append(row)
    return pd.DataFrame(rows, columns=schema_of("leaderboard").names)
