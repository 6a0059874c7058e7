"""The chronological hold-out (INPUT_SCHEMA.md): latest ceil(0.2 N) interviews are the test side.

Split at interview level, never pair level, so nothing from a held-out conversation leaks into
training context through a sibling pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from .errors import SplitError
from .schema import Interview, PreparedInput, QAPair

TEST_FRACTION = 0.20


@dataclass(frozen=True)
class PairRef:
    """A QA pair with the interview it belongs to and its chronological rank.

    ``order`` is the pair's position in (sequence, position-in-interview) order over its side,
    which is what "latest training pairs" means.
    """

    pair: QAPair
    interview_id: str
    sequence: int
    position: int
    order: int

    @property
    def qa_id(self) -> str:
        return self.pair.qa_id

    @property
    def question(self) -> str:
        return self.pair.question

    @property
    def response(self) -> str:
        return self.pair.response

    @property
    def tags(self) -> tuple[str, ...]:
        return self.pair.tags


def _flatten(interviews: tuple[Interview, ...]) -> tuple[PairRef, ...]:
    out: list[PairRef] = []
    for itv in interviews:
        for pos, p in enumerate(itv.qa_pairs):
            out.append(PairRef(p, itv.interview_id, itv.sequence, pos, len(out)))
    return tuple(out)


@dataclass(frozen=True)
class HeldOutSplit:
    """One personality's training and test partitions, each sorted oldest first."""

    doc: PreparedInput
    train_interviews: tuple[Interview, ...]
    test_interviews: tuple[Interview, ...]

    @property
    def personality_id(self) -> str:
        return self.doc.personality_id

    @cached_property
    def train_pairs(self) -> tuple[PairRef, ...]:
        """Training pairs in (sequence, position) order, newest last: the only selectable context."""
        return _flatten(self.train_interviews)

    @cached_property
    def test_pairs(self) -> tuple[PairRef, ...]:
        """Held-out pairs in (sequence, position) order. Their responses are references only."""
        return _flatten(self.test_interviews)


def heldout_interview_count(n_interviews: int) -> int:
    """Number of held-out interviews for N interviews: ceil(0.2 N), computed without float drift."""
    # ceil(N/5) in integers: 0.2*N in floats can land a hair above an integer (e.g. 0.2*15).
    return -(-n_interviews // 5)


def split_personality(doc: PreparedInput) -> HeldOutSplit:
    """Split one validated document chronologically.

    Raises:
        SplitError: fewer than two interviews, so one side would be empty.
    """
    n = len(doc.interviews)
    if n < 2:
        raise SplitError(
            f"personality {doc.personality_id!r} has {n} interview(s); the chronological hold-out "
            "needs at least 2 (one training, one test)"
        )
    ordered = tuple(sorted(doc.interviews, key=lambda i: i.sequence))
    n_test = heldout_interview_count(n)
    assert n_test == math.ceil(TEST_FRACTION * n) or abs(TEST_FRACTION * n - round(TEST_FRACTION * n)) < 1e-9
    return HeldOutSplit(doc=doc, train_interviews=ordered[: n - n_test], test_interviews=ordered[n - n_test :])
