"""Per-item judgments -> per-personality metrics -> macro averages over personalities.

Pure functions over DataFrames with the columns of docs/DESIGN.md ("Tables"). The rules are
the seed's: CS is the mean score; the contradiction ratio is Contradiction over all FC
judgments; PS is the alignment of the two sides' modal trait levels; MCQ accuracy and reward
are means over items per option count. Rows whose call did not end ``ok`` are unscored for
CS, FC and PS (counted in ``*_invalid``, never coerced to a score); MCQ rows already carry the
seed's -0.5 for a malformed group answer, so they are averaged as they are and only counted.
"""

from __future__ import annotations

import math
from typing import Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..contracts.personality import TRAITS, alignment, modal_vote
from .statistics import Interval, bootstrap_ci

__all__ = [
    "Aggregate",
    "CI_CONFIDENCE",
    "CI_N_RESAMPLES",
    "macro_interval",
    "METHOD_SCORE_COLUMNS",
    "MACRO_METRICS",
    "cs_mean",
    "contradiction_ratio",
    "trait_levels",
    "ps_alignment",
    "mcq_scores",
    "personality_scores",
    "macro_average",
]

OK = "ok"
CONTRADICTION = "Contradiction"

METHOD_SCORE_COLUMNS: tuple[str, ...] = (
    "personality_id", "method", "judge",
    "cs_mean", "cs_n", "cs_invalid",
    "contradiction_ratio", "fc_n", "fc_invalid",
    "ps_alignment", "ps_invalid",
    "mcq3_accuracy", "mcq3_reward", "mcq4_accuracy", "mcq4_reward", "mcq_invalid",
    "n_test_questions", "n_train_pairs",
    "prompt_tokens", "completion_tokens", "cost_usd",
)  # fmt: skip
"""Columns of the ``method_scores`` table, in order."""

MACRO_METRICS: tuple[str, ...] = (
    "cs_mean", "contradiction_ratio", "ps_alignment",
    "mcq3_accuracy", "mcq3_reward", "mcq4_accuracy", "mcq4_reward",
)  # fmt: skip
"""Per-personality metrics macro-averaged over personalities, each with a bootstrap CI."""

CI_CONFIDENCE = 0.95
"""Confidence level of every macro-average interval (leaderboard table, report, Dagster metadata)."""
CI_N_RESAMPLES = 2000
"""Bootstrap resamples of every macro-average interval."""

_SUMMED = ("cs_invalid", "fc_invalid", "ps_invalid", "mcq_invalid", "prompt_tokens", "completion_tokens", "cost_usd")
_TOKEN_COLS = ("prompt_tokens", "completion_tokens", "cost_usd")


class Aggregate(NamedTuple):
    """One metric over one personality: its value (NaN when nothing valid), valid n, invalid n."""

    value: float
    n: int
    invalid: int


def _ok(df: pd.DataFrame) -> pd.Series:
    return df["status"] == OK


def cs_mean(cs: pd.DataFrame) -> Aggregate:
    """Mean Content Similarity score over ``ok`` judgments."""
    if cs.empty:
        return Aggregate(math.nan, 0, 0)
    ok = _ok(cs)
    scores = cs.loc[ok, "score"].astype(float)
    return Aggregate(float(scores.mean()) if len(scores) else math.nan, int(ok.sum()), int((~ok).sum()))


def contradiction_ratio(fc: pd.DataFrame) -> Aggregate:
    """Share of ``ok`` Factual Consistency judgments labelled Contradiction."""
    if fc.empty:
        return Aggregate(math.nan, 0, 0)
    ok = _ok(fc)
    labels = fc.loc[ok, "label"]
    value = float((labels == CONTRADICTION).mean()) if len(labels) else math.nan
    return Aggregate(value, int(ok.sum()), int((~ok).sum()))


def trait_levels(votes: pd.DataFrame) -> dict[str, tuple[str, float] | None]:
    """Per trait, the modal level and its confidence, or None when it lacks three valid votes.

    The seed defines the level as the mode of exactly three runs; a trait with an invalid or
    missing run has no level rather than a mode of two.
    """
    out: dict[str, tuple[str, float] | None] = dict.fromkeys(TRAITS)
    if votes.empty:
        return out
    ok = votes[_ok(votes)]
    for trait in TRAITS:
        rates = ok.loc[ok["trait"] == trait].sort_values("vote_index")["rate"].tolist()
        try:
            out[trait] = modal_vote(rates)
        except ValueError:
            out[trait] = None
    return out


def ps_alignment(reference_votes: pd.DataFrame, generated_votes: pd.DataFrame) -> Aggregate:
    """Personality alignment between the reference and generated sides under one judge.

    ``n`` is the number of traits leveled on both sides (5 when valid); ``invalid`` counts
    vote rows (either side) whose call did not end ``ok``. NaN unless all five traits have a
    level on both sides.
    """
    ref = trait_levels(reference_votes)
    gen = trait_levels(generated_votes)
    both = [t for t in TRAITS if ref[t] is not None and gen[t] is not None]
    invalid = sum(int((~_ok(v)).sum()) for v in (reference_votes, generated_votes) if not v.empty)
    if len(both) != len(TRAITS):
        return Aggregate(math.nan, len(both), invalid)
    value = alignment({t: ref[t][0] for t in TRAITS}, {t: gen[t][0] for t in TRAITS})  # type: ignore[index]
    return Aggregate(float(value), len(both), invalid)


def mcq_scores(answers: pd.DataFrame) -> dict[str, float | int]:
    """Accuracy and mean reward per option count (3 and 4) and the number of non-ok rows.

    Every item row counts, including those of an invalid group answer: the seed scores a
    malformed answer as accuracy 0 and reward -0.5, which the rows already hold.
    """
    out: dict[str, float | int] = {}
    for n_opt in (3, 4):
        rows = answers[answers["n_options"] == n_opt]
        out[f"mcq{n_opt}_accuracy"] = float(rows["correct"].astype(float).mean()) if len(rows) else math.nan
        out[f"mcq{n_opt}_reward"] = float(rows["reward"].astype(float).mean()) if len(rows) else math.nan
    out["mcq_invalid"] = int((~_ok(answers)).sum()) if len(answers) else 0
    return out


def _usage(frames: Iterable[pd.DataFrame]) -> dict[str, float]:
    totals = dict.fromkeys(_TOKEN_COLS, 0.0)
    for df in frames:
        for col in _TOKEN_COLS:
            if col in df.columns and len(df):
                totals[col] += float(pd.to_numeric(df[col], errors="coerce").fillna(0).sum())
    return totals


def _mcq_calls(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per group call: its call columns repeat on every item row of the group."""
    if answers.empty or "interview_id" not in answers.columns:
        return answers
    return answers.drop_duplicates(subset=["n_options", "interview_id"])


def _pick(df: pd.DataFrame | None, **keys: str) -> pd.DataFrame:
    if df is None:
        return pd.DataFrame(columns=["status", *keys])
    mask = np.ones(len(df), dtype=bool)
    for col, value in keys.items():
        if col in df.columns:
            mask &= (df[col] == value).to_numpy()
    return df[mask]


def _judges_in(*frames: pd.DataFrame) -> list[str]:
    names: set[str] = set()
    for df in frames:
        if "judge" in df.columns:
            names.update(df["judge"].dropna().astype(str))
    return sorted(names)


def personality_scores(
    personality_id: str,
    method: str,
    *,
    generations: pd.DataFrame | None = None,
    content_similarity: pd.DataFrame | None = None,
    factual_consistency: pd.DataFrame | None = None,
    generated_personality: pd.DataFrame | None = None,
    reference_personality: pd.DataFrame | None = None,
    mcq_answers: pd.DataFrame | None = None,
    n_train_pairs: int = 0,
    judges: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The ``method_scores`` rows of one personality x method: one row per judge.

    Input frames may hold other personalities, methods or judges; they are filtered here.
    ``judges`` defaults to every judge seen in the judgment frames. MCQ is judge-independent
    and repeats on each row. ``prompt_tokens``/``completion_tokens``/``cost_usd`` are what this
    row's numbers cost within the partition: the generations, the MCQ answering calls (once
    per group) and this judge's CS, FC and generated-side PS calls. Generation and MCQ usage
    therefore repeats on each judge row; sum judge-specific usage from the judgment tables.
    """
    gen = _pick(generations, personality_id=personality_id, method=method)
    cs_all = _pick(content_similarity, personality_id=personality_id, method=method)
    fc_all = _pick(factual_consistency, personality_id=personality_id, method=method)
    gps_all = _pick(generated_personality, personality_id=personality_id, method=method)
    rps_all = _pick(reference_personality, personality_id=personality_id)
    mcq = _pick(mcq_answers, personality_id=personality_id, method=method)
    if judges is None:
        judges = _judges_in(cs_all, fc_all, gps_all, rps_all)
    mcq_part = mcq_scores(mcq) if len(mcq) else {
        "mcq3_accuracy": math.nan, "mcq3_reward": math.nan,
        "mcq4_accuracy": math.nan, "mcq4_reward": math.nan, "mcq_invalid": 0,
    }  # fmt: skip
    n_test = int(gen["qa_id"].nunique()) if "qa_id" in gen.columns else 0
    rows = []
    for judge in judges:
        cs = _pick(cs_all, judge=judge)
        fc = _pick(fc_all, judge=judge)
        gps = _pick(gps_all, judge=judge)
        rps = _pick(rps_all, judge=judge)
        c, f, p = cs_mean(cs), contradiction_ratio(fc), ps_alignment(rps, gps)
        usage = _usage([gen, _mcq_calls(mcq), cs, fc, gps])
        rows.append({
            "personality_id": personality_id, "method": method, "judge": judge,
            "cs_mean": c.value, "cs_n": c.n, "cs_invalid": c.invalid,
            "contradiction_ratio": f.value, "fc_n": f.n, "fc_invalid": f.invalid,
            "ps_alignment": p.value, "ps_invalid": p.invalid,
            **mcq_part,
            "n_test_questions": n_test, "n_train_pairs": int(n_train_pairs),
            "prompt_tokens": int(usage["prompt_tokens"]), "completion_tokens": int(usage["completion_tokens"]),
            "cost_usd": usage["cost_usd"],
        })  # fmt: skip
    return _typed(pd.DataFrame(rows, columns=list(METHOD_SCORE_COLUMNS)))


_INT_COLS = ("cs_n", "cs_invalid", "fc_n", "fc_invalid", "ps_invalid", "mcq_invalid",
             "n_test_questions", "n_train_pairs", "prompt_tokens", "completion_tokens")  # fmt: skip


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    for col in df.columns:
        if col in ("personality_id", "method", "judge"):
            df[col] = df[col].astype(object)
        elif col in _INT_COLS:
            df[col] = df[col].astype("int64")
        else:
            df[col] = df[col].astype("float64")
    return df


def macro_interval(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = CI_N_RESAMPLES,
    confidence: float = CI_CONFIDENCE,
) -> Interval:
    """Macro mean over personalities and its percentile bootstrap interval (NaNs dropped).

    The one interval both the leaderboard Parquet and the report show, so the same numbers never
    get two CIs. Percentile rather than BCa: BCa's jackknife acceleration is unstable with the
    handful of personalities a run usually has. Values are sorted before resampling so the
    interval depends only on the per-personality values, not on the row order the tables were
    read in (the Parquet step and the report concatenate partitions in different orders).
    """
    arr = np.sort(np.asarray(values, dtype=np.float64).ravel())
    return bootstrap_ci(arr, confidence=confidence, n_resamples=n_resamples, seed=seed, method="percentile")


def macro_average(
    method_scores: pd.DataFrame,
    *,
    confidence: float = CI_CONFIDENCE,
    n_resamples: int = CI_N_RESAMPLES,
    seed: int = 0,
    with_ci: bool = True,
) -> pd.DataFrame:
    """Macro averages over personalities, one row per (method, judge).

    Each metric is the mean of its per-personality values, skipping personalities where it is
    NaN (no valid judgments); ``<metric>_ci_low``/``_ci_high`` is a bootstrap interval over
    those personalities (``macro_interval``; NaN with fewer than two). Invalid counts, tokens and cost are summed.
    """
    cols = ["method", "judge", "n_personalities"]
    for m in MACRO_METRICS:
        cols += [m, f"{m}_ci_low", f"{m}_ci_high"]
    cols += list(_SUMMED)
    rows = []
    for (method, judge), grp in method_scores.groupby(["method", "judge"], sort=True):
        row: dict[str, object] = {"method": method, "judge": judge, "n_personalities": int(grp["personality_id"].nunique())}
        for m in MACRO_METRICS:
            values = grp[m].to_numpy(dtype=float)
            if with_ci:
                ci = macro_interval(values, seed=seed, n_resamples=n_resamples, confidence=confidence)
                row[m], row[f"{m}_ci_low"], row[f"{m}_ci_high"] = ci.estimate, ci.low, ci.high
            else:
                valid = values[~np.isnan(values)]
                row[m] = float(valid.mean()) if len(valid) else math.nan
                row[f"{m}_ci_low"] = row[f"{m}_ci_high"] = math.nan
        for s in _SUMMED:
            row[s] = grp[s].sum()
        rows.append(row)
    out = pd.DataFrame(rows, columns=cols)
    for c in cols[2:]:
        out[c] = out[c].astype("int64" if c in _INT_COLS or c == "n_personalities" else "float64")
    return out
