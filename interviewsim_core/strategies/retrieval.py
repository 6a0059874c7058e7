"""Retrieval: the k training pairs whose questions are most similar to the new question.

Paper Appendix J.2 (Memory-k): cosine similarity between question embeddings, top k. All
questions of a personality are ranked at once: one (n_questions x n_train) matrix product of
L2-normalised embeddings, then a partial sort per row; no Python loop over pairs.

An MCQ group (several atomic questions sharing one prompt) gets the ordered, de-duplicated
union of each question's k pairs (question order, then rank order).

Ranking is made reproducible in two ways. Similarities are computed in float64 and rounded
to 1e-9, so the order never depends on BLAS summation order (a matrix product and a
per-question dot product can differ in the last bits, which would flip near-identical
questions); differences below that are ties. Ties go to the older training pair (lower
chronological order), so identical training questions are always taken oldest first.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..embeddings import Embedder, EmbeddingCache, cached_embed
from ..split import HeldOutSplit, PairRef
from ._base import BaseStrategy, GenerationContext, MethodSpec, Question, SelectionInputs, context_from_examples
from ._base import register_strategy

SIMILARITY_DECIMALS = 9


def train_question_matrix(
    split: HeldOutSplit, embedder: Embedder, cache: EmbeddingCache | None = None
) -> np.ndarray:
    """Embeddings of the training questions, one row per ``split.train_pairs`` entry.

    Computed once per personality and embedder when a cache is given; pass the result back
    as ``train_embeddings`` to reuse it across methods within one process.
    """
    return cached_embed(embedder, [p.question for p in split.train_pairs], cache)


def similarities(query: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Cosine similarities (rows are unit-norm) as float64, rounded to SIMILARITY_DECIMALS."""
    q = np.asarray(query, dtype=np.float64)
    t = np.asarray(train, dtype=np.float64)
    if q.ndim != 2 or t.ndim != 2 or q.shape[1] != t.shape[1]:
        raise ValueError(f"embedding shapes do not match: questions {q.shape}, training {t.shape}")
    return np.round(q @ t.T, SIMILARITY_DECIMALS)


def top_k(sims: np.ndarray, k: int) -> np.ndarray:
    """Per row, the column indices of the ``k`` largest values, best first; ties by lower index.

    Returns shape ``(n_rows, min(k, n_cols))``. Uses ``argpartition`` to find each row's k-th
    value, then resolves ties at that boundary towards lower indices, so only k entries per
    row are fully sorted.
    """
    n_rows, n_cols = sims.shape
    k = max(0, min(k, n_cols))
    if k == 0 or n_rows == 0:
        return np.empty((n_rows, k), dtype=np.intp)
    if k == n_cols:
        return np.argsort(-sims, axis=1, kind="stable")
    part = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(sims, part, axis=1).min(axis=1, keepdims=True)
    above = sims > kth
    at = sims == kth
    need = k - above.sum(axis=1, keepdims=True)  # how many boundary ties each row keeps
    keep = above | (at & (np.cumsum(at, axis=1) <= need))
    # nonzero walks rows in order and columns ascending: exactly k per row, lower index first.
    cols = np.nonzero(keep)[1].reshape(n_rows, k)
    order = np.argsort(-np.take_along_axis(sims, cols, axis=1), axis=1, kind="stable")
    return np.take_along_axis(cols, order, axis=1)


def retrieve(
    split: HeldOutSplit,
    question_texts: Sequence[str],
    k: int,
    embedder: Embedder | None,
    *,
    train_embeddings: np.ndarray | None = None,
    cache: EmbeddingCache | None = None,
) -> list[tuple[PairRef, ...]]:
    """For each question text, its top-``k`` training pairs in rank order (best first)."""
    train = split.train_pairs
    if k <= 0 or not train or not question_texts:
        return [() for _ in question_texts]
    if embedder is None:
        raise ValueError("retrieval needs an embedder (the caller-supplied embedding function)")
    if train_embeddings is None:
        train_embeddings = train_question_matrix(split, embedder, cache)
    if len(train_embeddings) != len(train):
        raise ValueError(
            f"train_embeddings has {len(train_embeddings)} rows for {len(train)} training pairs"
        )
    query = np.asarray(embedder.embed(list(question_texts)), dtype=np.float32)
    idx = top_k(similarities(query, train_embeddings), k)
    return [tuple(train[i] for i in row) for row in idx.tolist()]


def retrieve_for(split: HeldOutSplit, questions: Sequence[Question], k: int,
                 inputs: SelectionInputs) -> list[tuple[PairRef, ...]]:
    """``retrieve`` over (qa_id, text) questions with the run's embedder and shared embeddings."""
    return retrieve(split, [text for _, text in questions], k, inputs.embedder,
                    train_embeddings=inputs.train_embeddings, cache=inputs.cache)


def ordered_union(*groups: Sequence[PairRef]) -> tuple[PairRef, ...]:
    """Concatenate, keeping the first occurrence of each qa_id (earlier groups win)."""
    seen: set[str] = set()
    out: list[PairRef] = []
    for group in groups:
        for p in group:
            if p.qa_id not in seen:
                seen.add(p.qa_id)
                out.append(p)
    return tuple(out)


@register_strategy
class Retrieval(BaseStrategy):
    name = "retrieval"
    aliases = ("memory",)
    params = ("k",)
    needs_embedder = True

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        ranked = retrieve_for(split, questions, spec.params["k"], inputs)
        return [context_from_examples(spec, r, split) for r in ranked]

    def select_group(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
                     inputs: SelectionInputs, group_key: str) -> GenerationContext:
        union = ordered_union(*retrieve_for(split, questions, spec.params["k"], inputs))
        return context_from_examples(spec, union, split)
