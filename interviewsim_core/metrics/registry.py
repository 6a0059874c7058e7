"""The one list of metrics: every table schema, the leaderboard, the report and the Dagster metadata
are derived from it, so adding a metric is one entry here plus its per-item values in ``scores.py``.

A metric belongs to a *family*: the per-item judgments it is computed from (CS judgments, FC
judgments, PS votes, MCQ items of one option count). The family fixes what a comparable *cell*
is (a held-out question, a personality, an MCQ item) and how its outputs are counted
(expected / valid / invalid / failed / not run); both metrics of an MCQ family share its cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Family",
    "Metric",
    "FAMILIES",
    "METRICS",
    "JUDGED_METRICS",
    "MCQ_METRICS",
    "COUNT_KINDS",
    "family",
    "metric",
    "count_column",
    "cells_column",
    "items_column",
]

CellKind = Literal["question", "personality", "item"]


@dataclass(frozen=True)
class Family:
    """Per-item judgments that one or more metrics are computed from."""

    key: str
    """Prefix of the family's count columns in ``method_scores`` (``cs_n``, ``mcq3_failed``...)."""
    source: str
    """Table holding the per-item outputs."""
    noun: str
    """What one counted unit is called in messages ("0 valid MCQ items (20 of 20 invalid)")."""
    cell: CellKind
    """What two methods must both have a valid value for to be compared on it."""
    judged: bool
    """False for MCQ: exact-match scoring, the same on every judge's row."""
    n_options: int | None = None
    cell_noun: str | None = None
    """What one comparable cell is called when it is not one counted unit (PS: a personality's alignment,
    made of 30 votes)."""

    @property
    def cells_noun(self) -> str:
        return self.cell_noun or self.noun


@dataclass(frozen=True)
class Metric:
    """One leaderboard metric."""

    name: str
    """Column of ``method_scores`` (the per-personality value) and ``metric`` value in the leaderboard."""
    label: str
    short: str
    direction: Literal["higher", "lower"]
    unit: str
    family_key: str
    item_column: str
    """Column of the family's source table the per-item value comes from."""
    aggregation: str
    """How per-item values become the per-personality value (then macro-averaged over personalities)."""
    percent: bool
    """Shown as a percentage (the paper's convention for CR, PS and MCQ accuracy)."""
    digits: int

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def family(self) -> Family:
        return family(self.family_key)

    @property
    def judged(self) -> bool:
        return self.family.judged

    @property
    def key(self) -> str:
        """Alias of ``name`` (the report's historical attribute)."""
        return self.name


FAMILIES: tuple[Family, ...] = (
    Family("cs", "content_similarity", "CS judgments", "question", True),
    Family("fc", "factual_consistency", "FC judgments", "question", True),
    Family("ps", "generated_personality", "PS votes", "personality", True, cell_noun="PS alignments"),
    Family("mcq3", "mcq_answers", "3-option MCQ items", "item", False, 3),
    Family("mcq4", "mcq_answers", "4-option MCQ items", "item", False, 4),
)

METRICS: tuple[Metric, ...] = (
    Metric("cs_mean", "Content Similarity (1-5, higher better)", "CS", "higher", "score 1-5", "cs", "score",
           "mean of valid scores", False, 2),
    Metric("contradiction_ratio", "Contradiction Ratio (%, lower better)", "CR %", "lower", "%", "fc", "label",
           "Contradiction judgments / valid FC judgments", True, 2),
    Metric("ps_alignment", "Personality Similarity (%, higher better)", "PS %", "higher", "%", "ps", "rate",
           "1 - sum |level_ref - level_gen| / 10 over modal levels of 3 votes x 5 traits", True, 1),
    Metric("mcq3_accuracy", "MCQ 3-option accuracy (%)", "MCQ3 acc %", "higher", "%", "mcq3", "correct",
           "mean over items (malformed answer = 0)", True, 1),
    Metric("mcq3_reward", "MCQ 3-option reward", "MCQ3 reward", "higher", "reward -1..1", "mcq3", "reward",
           "mean over items (malformed answer = -0.5)", False, 3),
    Metric("mcq4_accuracy", "MCQ 4-option accuracy (%)", "MCQ4 acc %", "higher", "%", "mcq4", "correct",
           "mean over items (malformed answer = 0)", True, 1),
    Metric("mcq4_reward", "MCQ 4-option reward", "MCQ4 reward", "higher", "reward -1..1", "mcq4", "reward",
           "mean over items (malformed answer = -0.5)", False, 3),
)
def family(key: str) -> Family:
    try:
        return _FAMILY[key]
    except KeyError:
        raise KeyError(f"unknown metric family {key!r}; known: {sorted(_FAMILY)}") from None


def metric(name: str) -> Metric:
    """The registry entry of ``name``; KeyError names the known metrics."""
    try:
        return _METRIC[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {sorted(_METRIC)}") from None


_FAMILY = {f.key: f for f in FAMILIES}
_METRIC = {m.name: m for m in METRICS}
JUDGED_METRICS: tuple[Metric, ...] = tuple(m for m in METRICS if m.judged)
MCQ_METRICS: tuple[Metric, ...] = tuple(m for m in METRICS if not m.judged)

COUNT_KINDS: tuple[str, ...] = ("expected", "n", "invalid", "failed", "not_run")
"""Per family, in ``method_scores``: cells expected; with a value; without one because an output
(the judgment, or the generation / MCQ item it needed) was invalid; because a call failed in
transport after retries; because no output exists (not run yet, or an upstream table missing).
``expected = n + invalid + failed + not_run`` (+ ``no_item`` for MCQ). MCQ families add
``malformed``: answers that broke the contract and are scored as the seed says (accuracy 0, reward
-0.5), counted inside ``n``; and ``no_item``: questions that got no MCQ item because their atomic item
was invalid or failed (no MCQ item was generated, so none was invalid)."""



def count_column(fam: Family | str, kind: str) -> str:
    key = fam.key if isinstance(fam, Family) else fam
    return f"{key}_{kind}"


def cells_column(fam: Family | str) -> str:
    """List column of the cells (qa or item ids) holding a value, for question/item families."""
    key = fam.key if isinstance(fam, Family) else fam
    return f"{key}_cells"


def items_column(m: Metric | str) -> str:
    """List column of the per-cell values of a metric, aligned with its family's cells column."""
    name = m.name if isinstance(m, Metric) else m
    return f"{name}_items"
