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
from ..metrics.leaderboard import DEFAULT_COVERAGE_THRESHOLD, empty_reason, leaderboard
from ..metrics.registry import family
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
    atomic_items: pd.DataFrame | None = None,
    mcq_options: Sequence[int] | None = None,
    embedding_model: str = "",
) -> pd.DataFrame:
    """The ``method_scores`` rows of one (personality, method): one per configured judge.

    Judges are passed explicitly (not inferred from the rows) so a judge whose every output
    failed still gets its row, with NaN metrics and its invalid/failed counts. The split's held-out
    questions and ``mcq_options`` say what was expected (one MCQ item per question and option count);
    ``mcq_items`` and ``atomic_items`` (the personality's, any status) say why an item is missing, so
    a failed generation or an invalid item is counted, not silently absent. ``embedding_model`` is
    recorded on every row (retrieval methods' numbers depend on it).
    """
    names = [_name(j) for j in judges]
    if not names:
        return empty_frame("method_scores")
    df = personality_scores(
        split.personality_id, method_name,
        generations=generations, content_similarity=cs, factual_consistency=fc,
        generated_personality=generated_ps, reference_personality=reference_ps, mcq_answers=mcq_answers,
        mcq_items=mcq_items, atomic_items=atomic_items, mcq_options=mcq_options,
        test_qa_ids=[p.qa_id for p in split.test_pairs],
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


def mcq_output_gaps(
    n_expected: int,
    mcq_items: pd.DataFrame,
    mcq_answers: pd.DataFrame,
    options: Sequence[int],
    atomic_items: pd.DataFrame | None = None,
) -> list[str]:
    """Why an option count has no scored MCQ answer although items were expected, one message each.

    ``n_expected`` is the number of held-out questions of the partition (one atomic item, then one
    MCQ item per option count, each). An empty ``mcq_answers`` partition is then not a pass "on
    nothing": the message names what happened, e.g. "0 valid 3-option MCQ items (20 of 20 invalid)".
    Items missing from ``mcq_items`` are counted by their atomic item's status when given.
    """
    out: list[str] = []
    if n_expected <= 0:
        return out
    atomic_bad = {"invalid": 0, "failed": 0}
    if atomic_items is not None and not atomic_items.empty:
        vc = atomic_items["status"].value_counts()
        atomic_bad = {k: int(vc.get(k, 0)) for k in atomic_bad}
    for n in options:
        fam = family(f"mcq{n}")
        items = mcq_items[mcq_items["n_options"] == n] if not mcq_items.empty else mcq_items
        answers = mcq_answers[mcq_answers["n_options"] == n] if not mcq_answers.empty else mcq_answers
        if len(answers) and answers["reward"].notna().any():
            continue
        ist = items["status"].value_counts() if len(items) else pd.Series(dtype="int64")
        invalid = int(ist.get("invalid", 0)) + atomic_bad["invalid"]
        failed = int(ist.get("failed", 0)) + atomic_bad["failed"]
        failed += int((answers["status"] == "failed").sum()) if len(answers) else 0
        expected = max(n_expected, len(items))
        invalid, failed = min(invalid, expected), min(failed, expected - min(invalid, expected))
        out.append(empty_reason(fam, expected, 0, invalid, failed, expected - invalid - failed))
    return out
