"""Hybrid: k1 retrieved pairs, then the latest k2, de-duplicated by qa_id (paper: Hybrid-50+50).

Relevance has priority: a pair that is both retrieved and recent keeps its retrieved slot
and is not repeated among the recent ones, so the context can hold fewer than k1 + k2 pairs
(``n_used`` records it). No profile text: the seed forbids it for hybrid. Either count may be
0 (``hybrid-0-5`` is chronological-5 in hybrid's order), not both.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from ..split import HeldOutSplit, PairRef
from ._base import BaseStrategy, GenerationContext, MethodSpec, Question, SelectionInputs, context_from_examples
from ._base import register_strategy
from .chronological import latest_pairs
from .retrieval import ordered_union, retrieve_for


def hybrid_examples(retrieved: Iterable[PairRef], latest: Iterable[PairRef]) -> tuple[PairRef, ...]:
    """Retrieved pairs in rank order, then the recent pairs not already retrieved, oldest first."""
    return ordered_union(tuple(retrieved), tuple(latest))


@register_strategy
class Hybrid(BaseStrategy):
    name = "hybrid"
    params = ("k1", "k2")
    needs_embedder = True

    def check_params(self, params: Mapping[str, int]) -> str | None:
        return "hybrid needs k1 + k2 >= 1" if params["k1"] + params["k2"] < 1 else None

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        recent = latest_pairs(split, spec.params["k2"])
        ranked = retrieve_for(split, questions, spec.params["k1"], inputs)
        return [context_from_examples(spec, hybrid_examples(r, recent), split) for r in ranked]

    def select_group(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
                     inputs: SelectionInputs, group_key: str) -> GenerationContext:
        union = ordered_union(*retrieve_for(split, questions, spec.params["k1"], inputs))
        return context_from_examples(spec, hybrid_examples(union, latest_pairs(split, spec.params["k2"])), split)
