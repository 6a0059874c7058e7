"""MCQ answering: the simulated person answers the MCQ items of each held-out interview at once.

Seed 000: one prompt per held-out source interview (and option count) presenting all its items
as Q1..QN, with one shared context: for retrieval the ordered union of what each atomic question
retrieves, for hybrid that union then the latest pairs (no profile). Context comes from training
pairs only; the items themselves are the only held-out-derived text in the prompt.

Scoring follows the seed: an invalid (malformed) group reply scores every item of the group -0.5.
A *failed* call (transport error after retries, nothing cached) is not a model answer, so its
rows are left unscored (null) and counted in ``mcq<k>_failed``; a re-run asks again.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd

from ..contracts import mcq_answering
from ..contracts.mcq_generation import ShuffledItem
from ..embeddings import Embedder, EmbeddingCache
from ..errors import GatewayError
from ..llm.types import ModelConfig
from ..split import HeldOutSplit
from ..strategies import MethodSpec, SelectionInputs, resolve_method, select_group_context
from ..strategies.calibration import REFERENCE, mcq_context
from .generation import unretrieved
from .calls import CallRunner, PlannedCall, Results, call_columns, contract_request, result_for, run_calls
from .tables import empty_frame, schema_of

_GROUP_ROW = ("personality_id", "method", "n_options", "interview_id")
_ITEM_COLUMNS = ("item_id", "qa_id", "n_options", "interview_id", "question", "labels", "texts", "kinds",
                 "correct_label")
"""What answering reads of an ``mcq_items`` row (``item_of`` and the group's ids)."""


def item_of(row: dict) -> ShuffledItem:
    """The shuffled item as stored in an ``mcq_items`` row (the order the answering prompt shows)."""
    return ShuffledItem(question=row["question"], labels=tuple(row["labels"]), texts=tuple(row["texts"]),
                        kinds=tuple(row["kinds"]), correct_label=row["correct_label"])


def plan_mcq_answers(
    split: HeldOutSplit,
    mcq_items_df: pd.DataFrame,
    method: MethodSpec | str,
    generator: ModelConfig,
    embedder: Embedder | None = None,
    seed: int = 0,
    *,
    train_embeddings: np.ndarray | None = None,
    embedding_cache: EmbeddingCache | None = None,
    retrieval_error: str | None = None,
    peer: HeldOutSplit | None = None,
) -> list[PlannedCall]:
    """One answering call per (held-out interview, option count) with at least one valid item.

    A calibration method answers with ``calibration.mcq_context``: ``reference`` open-book (the
    interview's held-out Q&A shown; its rows carry ``_open_book`` so the leak check names, not hides,
    the exemption), the floors with the nearest training pairs of this person or of ``peer``.

    Items are ordered as their source pairs were asked (held-out order); invalid MCQ items have no
    options to show and are left out (``mcq_items`` counts them). ``retrieval_error``: as in
    ``generation.plan_generations`` (the groups from the first failed retrieval on are planned failed).
    """
    spec = resolve_method(method)
    pid = split.personality_id
    generator = generator.for_personality(pid)  # the simulated person answers, so its adapter does
    rank = {p.qa_id: p.order for p in split.test_pairs}
    wanted = (mcq_items_df["personality_id"] == pid) & (mcq_items_df["status"] == "ok")
    items = mcq_items_df.loc[wanted, [c for c in _ITEM_COLUMNS if c in mcq_items_df.columns]]
    if items.empty:
        return []
    # One conversion of the frame, then groups in Python: a pandas groupby with a sort and a
    # ``to_dict`` per group was most of this function's time in the cost plan (issue 19).
    groups: dict[tuple[int, str], list[dict]] = {}
    for r in items.to_dict("records"):
        groups.setdefault((int(r["n_options"]), str(r["interview_id"])), []).append(r)
    out = []
    for (n_options, interview_id) in sorted(groups):
        records = sorted(groups[(n_options, interview_id)],
                         key=lambda r: (rank.get(r["qa_id"]) is None, rank.get(r["qa_id"], 0)))  # held-out order
        shuffled = [item_of(r) for r in records]
        if retrieval_error is None:
            try:
                if spec.is_calibration:
                    ctx = mcq_context(split, spec, [(r["item_id"], r["question"]) for r in records],
                                      SelectionInputs(embedder=embedder, seed=seed, cache=embedding_cache),
                                      str(interview_id), peer)
                else:
                    ctx = select_group_context(
                        split, spec, [(r["item_id"], r["question"]) for r in records], embedder, seed,
                        group_id=str(interview_id), train_embeddings=train_embeddings, cache=embedding_cache,
                    )
            except GatewayError as exc:
                retrieval_error = str(exc)
        failure = None if retrieval_error is None else unretrieved(spec.name, retrieval_error)
        messages = () if failure else mcq_answering.build_messages(pid, ctx, shuffled)
        parser = partial(mcq_answering.parse, label_sets=mcq_answering.label_sets_of(shuffled))
        row = {"personality_id": pid, "method": spec.name, "n_options": int(n_options),
               "interview_id": str(interview_id),
               # Not table columns: what the assembler needs to expand the group reply into item rows.
               "_items": shuffled, "_item_ids": [r["item_id"] for r in records],
               "_qa_ids": [r["qa_id"] for r in records],
               "_open_book": spec.strategy == REFERENCE}
        key = ("mcq_answers", pid, spec.name, int(n_options), str(interview_id))
        out.append(PlannedCall(key, generator,
                               contract_request(mcq_answering, messages, item_id=f"{interview_id}#{n_options}",
                                                parser=parser), row, failure))
    return out


def assemble_mcq_answers(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    """One row per item; the group call's columns repeat on each row, its tokens and cost on the first only.

    Putting usage on the first item keeps ``SUM(prompt_tokens)`` over the table equal to what was
    spent, while every row still says which call answered it and how that call went.
    """
    if not planned:
        return empty_frame("mcq_answers")
    rows = []
    for p in planned:
        res = result_for(results, p.key)
        calls = call_columns(p.model, p.request, res)
        items: list[ShuffledItem] = p.row["_items"]
        answers = list(res.value.answers) if res.status == "ok" else [None] * len(items)
        for pos, (item, item_id, qa_id, chosen) in enumerate(
            zip(items, p.row["_item_ids"], p.row["_qa_ids"], answers, strict=True), start=1
        ):
            if res.status == "failed":
                kind, correct, reward = None, None, None
            else:
                kind, acc, reward = mcq_answering.score_answer(chosen, item)
                correct = bool(acc)
            usage = {} if pos == 1 else {"prompt_tokens": 0, "completion_tokens": 0, "cached_prompt_tokens": 0, "cost_usd": 0.0}
            rows.append({
                **{k: p.row[k] for k in _GROUP_ROW}, "item_id": item_id, "qa_id": qa_id, "position": pos,
                "chosen_label": chosen, "chosen_kind": kind, "correct_label": item.correct_label,
                "correct": correct, "reward": reward, **calls, **usage,
            })
    return pd.DataFrame(rows, columns=schema_of("mcq_answers").names)


def answer_mcqs(
    split: HeldOutSplit,
    mcq_items_df: pd.DataFrame,
    method: MethodSpec | str,
    generator: ModelConfig,
    gw: CallRunner,
    embedder: Embedder | None = None,
    seed: int = 0,
    *,
    train_embeddings: np.ndarray | None = None,
    embedding_cache: EmbeddingCache | None = None,
) -> pd.DataFrame:
    """The ``mcq_answers`` table of one (personality, method) partition, every option count."""
    planned = plan_mcq_answers(split, mcq_items_df, method, generator, embedder, seed,
                               train_embeddings=train_embeddings, embedding_cache=embedding_cache)
    return assemble_mcq_answers(planned, run_calls(gw, planned))
