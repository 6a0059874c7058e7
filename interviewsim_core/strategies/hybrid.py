"""Hybrid: k1 retrieved pairs, then the latest k2, de-duplicated by qa_id (paper: Hybrid-50+50).

Relevance has priority: a pair that is both retrieved and recent keeps its retrieved slot
and is not repeated among the recent ones, so the context can hold fewer than k1 + k2 pairs
(``n_used`` records it). No profile text: the seed forbids it for hybrid.
"""

from __future__ import annotations

from typing import Iterable

from ..split import PairRef


def ordered_union(*groups: Iterable[PairRef]) -> tuple[PairRef, ...]:
    """Concatenate, keeping the first occurrence of each qa_id (earlier groups win)."""
    seen: set[str] = set()
    out: list[PairRef] = []
    for group in groups:
        for p in group:
            if p.qa_id not in seen:
                seen.add(p.qa_id)
                out.append(p)
    return tuple(out)


def hybrid_examples(retrieved: Iterable[PairRef], latest: Iterable[PairRef]) -> tuple[PairRef, ...]:
    """Retrieved pairs in rank order, then the recent pairs not already retrieved, oldest first."""
    return ordered_union(retrieved, latest)
