"""Calibration methods: anchors that say what a judge's number means (issue 32).

A Content Similarity of 3.1 means little until one knows what the same judge gives the person's own
answer (the ceiling) and what it gives an answer that knows nothing of the person (a floor). These
methods are chosen in the configuration like any method and judged by every judge, but they make
**no generation call**: their candidate is built here, without a model, so they have no generation
prompt for a held-out response to leak into.

- ``reference``: the held-out response itself. CS ceiling, FC false-contradiction rate on the
  person's own words, and (PS) the judge's stability on the reference. MCQ: the open-book ceiling
  (the interview's held-out Q&A in the answering context; the one prompt that shows held-out text
  by design, marked ``open_book`` and exempted by name from the leak check).
- ``copy-nearest``: the training response whose question is nearest the held-out question under the
  run's retrieval embedder (what retrieval alone earns). MCQ: those nearest training pairs as context.
- ``other-person``: the response of another personality (the *peer*: the next personality id of the
  corpus in sorted order, cyclic) to the peer's training question nearest the held-out question under
  the same embedder; ties to the older pair. MCQ: the peer's nearest pairs as context.

The selection is deterministic: the embedder's cosine ranking with retrieval's tie rule.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ConfigError
from ..split import HeldOutSplit, PairRef
from ._base import BaseStrategy, GenerationContext, MethodSpec, Question, SelectionInputs, register_strategy
from .retrieval import ordered_union, similarities, top_k, train_question_matrix

REFERENCE = "reference"
COPY_NEAREST = "copy-nearest"
OTHER_PERSON = "other-person"
CALIBRATION_METHODS: tuple[str, ...] = (REFERENCE, COPY_NEAREST, OTHER_PERSON)
"""In report order: the ceiling, then the two floors."""

FLOORS: tuple[str, ...] = (COPY_NEAREST, OTHER_PERSON)


class _Calibration(BaseStrategy):
    calibration = True

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        raise ConfigError(f"method {spec.name!r} is a calibration method: it has no generation prompt "
                          "(its candidate is built without a model, calibration.candidates)")


@register_strategy
class Reference(_Calibration):
    name = REFERENCE


@register_strategy
class CopyNearest(_Calibration):
    name = COPY_NEAREST
    needs_embedder = True


@register_strategy
class OtherPerson(_Calibration):
    name = OTHER_PERSON
    needs_embedder = True


def peer_of(personality_id: str, personalities: Sequence[str]) -> str | None:
    """The other person of ``other-person``: the next id after ``personality_id`` in sorted order,
    wrapping round; None when the corpus has no other personality."""
    ids = sorted(set(personalities))
    if personality_id not in ids or len(ids) < 2:
        return None
    return ids[(ids.index(personality_id) + 1) % len(ids)]


def nearest_pairs(pool: Sequence[PairRef], pool_embeddings: np.ndarray | None, question_texts: Sequence[str],
                  inputs: SelectionInputs) -> list[PairRef | None]:
    """Per question, the pool pair whose question is nearest under ``inputs.embedder`` (None: empty pool)."""
    if not pool or not question_texts:
        return [None for _ in question_texts]
    if inputs.embedder is None:
        raise ValueError("copy-nearest and other-person need the run's retrieval embedder")
    query = np.asarray(inputs.embedder.embed(list(question_texts)), dtype=np.float32)
    idx = top_k(similarities(query, pool_embeddings), 1)
    return [pool[row[0]] for row in idx.tolist()]


def candidates(split: HeldOutSplit, spec: MethodSpec, inputs: SelectionInputs,
               peer: HeldOutSplit | None = None, peer_embeddings: np.ndarray | None = None,
               ) -> list[tuple[str | None, list[str], str | None]]:
    """Per held-out pair of ``split`` (in order): (candidate text or None, source qa_ids, why none).

    ``peer``/``peer_embeddings``: the other person's split and its training-question matrix
    (``other-person`` only; None there gives every row the reason).
    """
    tests = split.test_pairs
    if spec.strategy == REFERENCE:
        return [(p.response, [p.qa_id], None) for p in tests]
    if spec.strategy == COPY_NEAREST:
        pool, emb = split.train_pairs, inputs.train_embeddings
        if emb is None and pool:
            emb = train_question_matrix(split, inputs.embedder, inputs.cache)
        why = "no training pair to copy"
    elif spec.strategy == OTHER_PERSON:
        if peer is None:
            return [(None, [], "no other personality in the corpus") for _ in tests]
        pool, emb = peer.train_pairs, peer_embeddings
        if emb is None and pool:
            emb = train_question_matrix(peer, inputs.embedder, inputs.cache)
        why = "the other personality has no training pair"
    else:
        raise ConfigError(f"method {spec.name!r} is not a calibration method")
    picked = nearest_pairs(pool, emb, [p.question for p in tests], inputs)
    return [(q.response, [q.qa_id], None) if q is not None else (None, [], why) for q in picked]


def mcq_context(split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question], inputs: SelectionInputs,
                interview_id: str, peer: HeldOutSplit | None = None) -> GenerationContext:
    """The shared context of one MCQ answering prompt of a calibration method (see the module doc).

    ``reference`` shows the held-out pairs of ``interview_id`` (open book, by design); the floors show
    the nearest pair per item question from this person's training side or the peer's.
    """
    if spec.strategy == REFERENCE:
        ex = tuple(p for p in split.test_pairs if p.interview_id == interview_id)
    else:
        side = split if spec.strategy == COPY_NEAREST else peer
        if side is None:
            ex = ()
        else:
            pool = side.train_pairs
            emb = train_question_matrix(side, inputs.embedder, inputs.cache) if pool else None
            near = nearest_pairs(pool, emb, [t for _, t in questions], inputs)
            ex = ordered_union(*([q] for q in near if q is not None))
    return GenerationContext(profile_text=None, examples=ex, n_requested=len(questions), n_used=len(ex),
                             strategy=spec.strategy)
