"""Chronological: the latest m training pairs, shown oldest to newest (paper: Chrono-m).

"Latest" is the (sequence, position) order of the training partition, so the pairs sit
right before the hold-out in time and keep their conversational order in the prompt. The
context does not depend on the question, so an MCQ group gets the same pairs.
"""

from __future__ import annotations

from typing import Sequence

from ..split import HeldOutSplit, PairRef
from ._base import BaseStrategy, GenerationContext, MethodSpec, Question, SelectionInputs, context_from_examples
from ._base import register_strategy


def latest_pairs(split: HeldOutSplit, m: int) -> tuple[PairRef, ...]:
    """The newest ``m`` training pairs (all of them when fewer exist), oldest first."""
    if m <= 0:
        return ()
    return split.train_pairs[-m:]


@register_strategy
class Chronological(BaseStrategy):
    name = "chronological"
    aliases = ("chrono",)
    params = ("m",)

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        return [context_from_examples(spec, latest_pairs(split, spec.params["m"]), split)] * len(questions)
