"""The evaluation artefacts built from held-out responses: fact summary, atomic items, MCQ items.

All three exist only to score generations; they are derived from held-out responses and therefore
never flow into a generation or MCQ-answering context (``leaks.py`` checks that). The builder is a
separately configured model so judges and generator can differ from it.
"""

from __future__ import annotations

from functools import partial

import pandas as pd

from ..contracts import atomic_item, fact_summary, mcq_generation
from ..llm.types import ModelConfig
from ..split import HeldOutSplit
from .calls import CallRunner, PlannedCall, Results, assemble, call_columns, contract_request, result_for, run_calls
from .tables import empty_frame, schema_of


# ---- fact summary -----------------------------------------------------------------------------

def plan_fact_summary(split: HeldOutSplit, builder: ModelConfig) -> list[PlannedCall]:
    """One call summarising this personality's held-out responses (and nobody else's)."""
    pid = split.personality_id
    pairs = split.test_pairs
    messages = fact_summary.build_messages(pid, [p.response for p in pairs])
    row = {"personality_id": pid, "source_qa_ids": [p.qa_id for p in pairs]}
    return [PlannedCall(("fact_summary", pid), builder, contract_request(fact_summary, messages, item_id=pid), row)]


def assemble_fact_summary(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("fact_summary", planned, results, lambda v: {"summary": v.summary, "explanation": v.explanation})


def build_fact_summary(split: HeldOutSplit, builder: ModelConfig, gw: CallRunner) -> pd.DataFrame:
    """The ``fact_summary`` table of one personality (one row)."""
    planned = plan_fact_summary(split, builder)
    return assemble_fact_summary(planned, run_calls(gw, planned))


# ---- atomic items -----------------------------------------------------------------------------

def plan_atomic_items(split: HeldOutSplit, builder: ModelConfig) -> list[PlannedCall]:
    """One call per held-out QA pair, each seeing only that pair."""
    pid = split.personality_id
    out = []
    for p in split.test_pairs:
        messages = atomic_item.build_messages(p.question, p.response)
        row = {"personality_id": pid, "qa_id": p.qa_id, "interview_id": p.interview_id, "sequence": p.sequence}
        out.append(PlannedCall(("atomic_items", pid, p.qa_id), builder,
                               contract_request(atomic_item, messages, item_id=p.qa_id), row))
    return out


def assemble_atomic_items(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("atomic_items", planned, results,
                    lambda v: {"atomic_question": v.question, "atomic_answer": v.answer})


def build_atomic_items(split: HeldOutSplit, builder: ModelConfig, gw: CallRunner) -> pd.DataFrame:
    """The ``atomic_items`` table of one personality: one row per held-out pair, invalid ones included."""
    planned = plan_atomic_items(split, builder)
    return assemble_atomic_items(planned, run_calls(gw, planned))


# ---- MCQ items --------------------------------------------------------------------------------

def item_id_of(qa_id: str, n_options: int) -> str:
    """``<qa_id>#<n>``: one item per held-out pair and option count."""
    return f"{qa_id}#{n_options}"


def shuffle_seed_of(seed: int, personality_id: str, item_id: str) -> str:
    """The shuffle key: stable across processes (a string, never a salted ``hash()``)."""
    return f"{seed}:{personality_id}:{item_id}"


def plan_mcq_items(
    split: HeldOutSplit, atomic_df: pd.DataFrame, builder: ModelConfig, option_counts: tuple[int, ...] = (3, 4)
) -> list[PlannedCall]:
    """One MCQ-generation call per valid atomic item and option count.

    An atomic item that came back invalid has no question to build from, so it yields no MCQ item;
    it is already counted as invalid in ``atomic_items``.
    """
    pid = split.personality_id
    ok = atomic_df[(atomic_df["personality_id"] == pid) & (atomic_df["status"] == "ok")]
    out = []
    for rec in ok.itertuples(index=False):
        for n in option_counts:
            iid = item_id_of(rec.qa_id, n)
            messages = mcq_generation.build_messages(rec.atomic_question, rec.atomic_answer, n)
            parser = partial(mcq_generation.parse, atomic_question=rec.atomic_question,
                             atomic_answer=rec.atomic_answer, n_options=n)
            row = {"personality_id": pid, "item_id": iid, "qa_id": rec.qa_id, "interview_id": rec.interview_id,
                   "n_options": n}
            out.append(PlannedCall(("mcq_items", pid, iid), builder,
                                   contract_request(mcq_generation, messages, item_id=iid, parser=parser), row))
    return out


def assemble_mcq_items(planned: list[PlannedCall], results: Results, seed: int) -> pd.DataFrame:
    """Rows of ``mcq_items``; valid items are shuffled reproducibly with their roles and key kept."""
    if not planned:
        return empty_frame("mcq_items")
    rows = []
    for p in planned:
        res = result_for(results, p.key)
        key = shuffle_seed_of(seed, p.row["personality_id"], p.row["item_id"])
        payload: dict = {"question": None, "labels": None, "texts": None, "kinds": None,
                         "correct_label": None, "shuffle_seed": key}
        if res.status == "ok":
            shuffled = mcq_generation.shuffle_item(res.value, key)
            payload.update(question=res.value.question, labels=list(shuffled.labels), texts=list(shuffled.texts),
                           kinds=list(shuffled.kinds), correct_label=shuffled.correct_label)
        rows.append({**p.row, **payload, **call_columns(p.model, p.request, res)})
    return pd.DataFrame(rows, columns=schema_of("mcq_items").names)


def build_mcq_items(
    split: HeldOutSplit, atomic_df: pd.DataFrame, builder: ModelConfig, gw: CallRunner, seed: int = 0,
    option_counts: tuple[int, ...] = (3, 4),
) -> pd.DataFrame:
    """The ``mcq_items`` table of one personality: per valid atomic item, one item per option count."""
    planned = plan_mcq_items(split, atomic_df, builder, option_counts)
    return assemble_mcq_items(planned, run_calls(gw, planned), seed)
