"""Random: k training pairs drawn uniformly without replacement (paper: Random-100 control).

The draw must be identical on every re-run, process and machine, or cached generations and
their scores stop matching the context that produced them. So the generator is seeded from
sha256(f"{seed}:{key}") (never Python's salted ``hash()``) where ``key`` is the question's
qa_id (an MCQ group: its source interview_id), and the sample is the k smallest of one uniform
draw per training pair, which only needs NumPy's ``Generator.random`` stream (PCG64, stable
across platforms).
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from ..split import HeldOutSplit, PairRef
from ._base import BaseStrategy, GenerationContext, MethodSpec, Question, SelectionInputs, context_from_examples
from ._base import register_strategy


def rng_for(seed: int, key: str) -> np.random.Generator:
    """A NumPy generator determined only by the configured seed and a string key."""
    digest = hashlib.sha256(f"{seed}:{key}".encode("utf-8")).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))


def random_pairs(split: HeldOutSplit, k: int, seed: int, key: str) -> tuple[PairRef, ...]:
    """``min(k, n_train)`` training pairs sampled for ``key``, presented in chronological order.

    Chronological presentation keeps the prompt readable as an interview history; which pairs
    are chosen is what the control varies, not their order.
    """
    train = split.train_pairs
    n = len(train)
    if k <= 0 or n == 0:
        return ()
    if k >= n:
        return train
    draws = rng_for(seed, key).random(n)
    chosen = np.sort(np.argsort(draws, kind="stable")[:k])
    return tuple(train[i] for i in chosen)


@register_strategy
class Random(BaseStrategy):
    name = "random"
    params = ("k",)

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        k = spec.params["k"]
        return [context_from_examples(spec, random_pairs(split, k, inputs.seed, qa_id), split)
                for qa_id, _ in questions]

    def select_group(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
                     inputs: SelectionInputs, group_key: str) -> GenerationContext:
        # One draw per group, keyed by the group: stable across runs, distinct between groups.
        return context_from_examples(spec, random_pairs(split, spec.params["k"], inputs.seed, group_key), split)
