"""Chronological: the latest m training pairs, shown oldest to newest (paper: Chrono-m).

"Latest" is the (sequence, position) order of the training partition, so the pairs sit
right before the hold-out in time and keep their conversational order in the prompt.
"""

from __future__ import annotations

from ..split import HeldOutSplit, PairRef


def latest_pairs(split: HeldOutSplit, m: int) -> tuple[PairRef, ...]:
    """The newest ``m`` training pairs (all of them when fewer exist), oldest first."""
    if m <= 0:
        return ()
    return split.train_pairs[-m:]
