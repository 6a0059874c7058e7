"""Entry points: the context for each held-out question, or for one MCQ answering group.

Questions come in as (qa_id, text) or are reduced to that immediately: a strategy never sees
a held-out response, and every selected pair is checked to be a training pair of the split.
The strategy is looked up in the registry, so these functions never name a strategy.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..embeddings import Embedder, EmbeddingCache
from ..split import HeldOutSplit
from ._base import GenerationContext, MethodSpec, QuestionLike, SelectionInputs, as_questions, strategy_for
from .presets import resolve_method


def select_contexts(
    split: HeldOutSplit,
    method: MethodSpec | str,
    questions: Sequence[QuestionLike],
    embedder: Embedder | None = None,
    seed: int = 0,
    *,
    train_embeddings: np.ndarray | None = None,
    cache: EmbeddingCache | None = None,
) -> list[GenerationContext]:
    """One ``GenerationContext`` per question, in the order given.

    Args:
        split: the personality's hold-out; only ``split.train_pairs`` are ever selected.
        method: a ``MethodSpec`` or a name ``resolve_method`` accepts.
        questions: held-out questions as ``(qa_id, text)`` tuples (or PairRefs, reduced to
            that at once).
        embedder: required by retrieval and hybrid; ignored otherwise.
        seed: the run's configured seed (random strategy: sample per ``seed`` and qa_id).
        train_embeddings: precomputed training-question matrix (``train_question_matrix``)
            so several methods share one embedding pass.
        cache: persistent embedding cache for the training questions.

    Raises:
        ConfigError: unknown method name.
        ValueError: retrieval/hybrid without an embedder.
    """
    spec = resolve_method(method)
    qs = as_questions(questions)
    inputs = SelectionInputs(embedder=embedder, seed=seed, train_embeddings=train_embeddings, cache=cache)
    return strategy_for(spec.strategy).select(split, spec, qs, inputs)


def select_group_context(
    split: HeldOutSplit,
    method: MethodSpec | str,
    questions: Sequence[QuestionLike],
    embedder: Embedder | None = None,
    seed: int = 0,
    *,
    group_id: str | None = None,
    train_embeddings: np.ndarray | None = None,
    cache: EmbeddingCache | None = None,
) -> GenerationContext:
    """The single shared context of one MCQ answering prompt (all items of one source interview).

    Retrieval: each atomic question retrieves its own k pairs; the context is their ordered,
    de-duplicated union (question order, then rank order). Hybrid: that union over k1, then
    the latest k2 pairs not already in it; no profile. Chronological and the profile
    strategies give what they give a single question. Random samples once for the group,
    keyed by ``group_id`` (pass the source interview_id) or, when absent, by the group's
    ids joined with "|"; so the draw is stable and distinct per group.

    ``n_requested`` is the method's per-question count, ``n_used`` the size of the union.
    """
    spec = resolve_method(method)
    qs = as_questions(questions)
    key = group_id if group_id is not None else "|".join(qa_id for qa_id, _ in qs)
    inputs = SelectionInputs(embedder=embedder, seed=seed, train_embeddings=train_embeddings, cache=cache)
    return strategy_for(spec.strategy).select_group(split, spec, qs, inputs, key)
