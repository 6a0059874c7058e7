"""Entry points: the context for each held-out question, or for one MCQ answering group.

Questions come in as (qa_id, text) or are reduced to that immediately: a strategy never sees
a held-out response, and every selected pair is checked to be a training pair of the split.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..embeddings import Embedder, EmbeddingCache
from ..split import HeldOutSplit
from ._base import (
    CHRONOLOGICAL,
    HYBRID,
    RANDOM,
    RETRIEVAL,
    GenerationContext,
    MethodSpec,
    QuestionLike,
    as_questions,
    context_from_examples,
)
from .chronological import latest_pairs
from .hybrid import hybrid_examples, ordered_union
from .presets import resolve_method
from .profiles import profile_context
from .retrieval import retrieve
from .sampling import random_pairs


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
    s = spec.strategy
    if s == CHRONOLOGICAL:
        ctx = context_from_examples(spec, latest_pairs(split, spec.params["m"]), split)
        return [ctx] * len(qs)
    if s == RANDOM:
        return [
            context_from_examples(spec, random_pairs(split, spec.params["k"], seed, qa_id), split)
            for qa_id, _ in qs
        ]
    if s in (RETRIEVAL, HYBRID):
        k = spec.params["k"] if s == RETRIEVAL else spec.params["k1"]
        ranked = retrieve(
            split, [text for _, text in qs], k, embedder, train_embeddings=train_embeddings, cache=cache
        )
        if s == RETRIEVAL:
            return [context_from_examples(spec, r, split) for r in ranked]
        recent = latest_pairs(split, spec.params["k2"])
        return [context_from_examples(spec, hybrid_examples(r, recent), split) for r in ranked]
    return [profile_context(split, spec)] * len(qs)


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
    s = spec.strategy
    if s == RANDOM:
        key = group_id if group_id is not None else "|".join(qa_id for qa_id, _ in qs)
        return context_from_examples(spec, random_pairs(split, spec.params["k"], seed, key), split)
    if s in (RETRIEVAL, HYBRID):
        k = spec.params["k"] if s == RETRIEVAL else spec.params["k1"]
        ranked = retrieve(
            split, [text for _, text in qs], k, embedder, train_embeddings=train_embeddings, cache=cache
        )
        union = ordered_union(*ranked)
        if s == HYBRID:
            union = hybrid_examples(union, latest_pairs(split, spec.params["k2"]))
        return context_from_examples(spec, union, split)
    contexts = select_contexts(split, spec, qs[:1] or [("", "")], embedder, seed)
    return contexts[0]
