"""The ``method_scores`` and ``leaderboard`` steps: table-shaped wrappers over ``metrics.scores``.

The aggregation rules themselves (seed 000: CS mean, contradiction ratio over valid FC judgments,
PS alignment of modal votes with unscored traits left NaN, MCQ accuracy and reward with the
seed's -0.5 for malformed answers) live in ``metrics/scores.py`` so the report and notebooks use
the very same code; this module only fixes the step signatures and the table schemas.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..llm.types import ModelConfig
from ..metrics.leaderboard import DEFAULT_COVERAGE_THRESHOLD, leaderboard
from ..metrics.scores import CI_N_RESAMPLES, personality_scores
from ..split import HeldOutSplit
from .tables import empty_frame, schema_of


def _name(judge: ModelConfig | str) -> str:
    return judge if isinstance(judge, str) else judge.name


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
    *,
    mcq_items: pd.DataFrame | None = None,
    embedding_model: str = "",
) -> pd.DataFrame:
    """The ``method_scores`` rows of one (personality, method): one per configured judge.

    Judges are passed explicitly (not inferred from the rows) so a judge whose every output
    failed still gets its row, with NaN metrics and its invalid/failed counts. The split's held-out
    questions and ``mcq_items`` (the personality's items, any status) say what was expected, so a
    failed generation or an invalid item is counted, not silently absent. ``embedding_model`` is
    recorded on every row (retrieval methods' numbers depend on it).
    """
    names = [_name(j) for j in judges]
    if not names:
        return empty_frame("method_scores")
    df = personality_scores(
        split.personality_id, method_name,
        generations=generations, content_similarity=cs, factual_consistency=fc,
        generated_personality=generated_ps, reference_personality=reference_ps, mcq_answers=mcq_answers,
        mcq_items=mcq_items, test_qa_ids=[p.qa_id for p in split.test_pairs],
        n_train_pairs=len(split.train_pairs), judges=names, embedding_model=embedding_model,
    )
    return df[schema_of("method_scores").names]


def build_leaderboard(
    method_scores_all: pd.DataFrame,
    *,
    seed: int = 0,
    n_resamples: int = CI_N_RESAMPLES,
    coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    methods_order: Sequence[str] = (),
) -> pd.DataFrame:
    """The ``leaderboard`` table: ``metrics.leaderboard.leaderboard`` (common-set and all-valid views,
    coverage, best marks, reasons for empty values) in the table's schema."""
    if method_scores_all.empty:
        return empty_frame("leaderboard")
    df = leaderboard(method_scores_all, coverage_threshold=coverage_threshold, seed=seed, n_resamples=n_resamples,
                     method_order=methods_order)
    return df[schema_of("leaderboard").names]


def combine_personality_scores(frames: Sequence[pd.DataFrame], methods_order: Sequence[str] = ()) -> pd.DataFrame:
    """One personality's ``method_scores`` rows across the methods run so far, as ``personality_scores``.

    Methods not run yet are simply absent (a partially run corpus is normal), so comparing one
    person's methods never waits for every method. Rows follow the configured method order, then
    judge, so the table reads the same whichever partitions happened to load first.
    """
    parts = [f for f in frames if f is not None and len(f)]
    if not parts:
        return empty_frame("personality_scores")
    df = pd.concat(parts, ignore_index=True)[schema_of("personality_scores").names]
    rank = {m: i for i, m in enumerate(methods_order)}
    order = df["method"].map(lambda m: rank.get(m, len(rank)))
    df = df.assign(_rank=order).sort_values(["_rank", "method", "judge"], kind="stable")
    return df.drop(columns="_rank").reset_index(drop=True)
