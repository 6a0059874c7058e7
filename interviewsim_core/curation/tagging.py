"""Thematic tagging (model): one of the four categories per pair, one of eight categories per personality.

One ``thematic_tagging`` call per kept transcript with pairs (its pairs in context, one category
each) and one ``personality_category`` call per personality. A failed call leaves the pairs untagged
(``tags`` empty, which INPUT_SCHEMA allows) or the category unset, and says so in the report.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from ..contracts import personality_category, thematic_tagging
from ..llm.types import ModelConfig
from ..pipeline.calls import PlannedCall, contract_request, result_for
from .models import failure_of, QAPairDraft


def plan_pairs(pid: str, file: str, pairs: Sequence[QAPairDraft], model: ModelConfig) -> list[PlannedCall]:
    if not pairs:
        return []
    messages = thematic_tagging.build_messages([(p.question, p.response) for p in pairs])
    request = contract_request(thematic_tagging, messages, item_id=f"{pid}/{file}",
                               parser=lambda raw, n=len(pairs): thematic_tagging.parse(raw, n))
    return [PlannedCall(("qa_tags", pid, file), model, request, {"file": file})]


def pair_tags(pid: str, file: str, pairs: Sequence[QAPairDraft], results: Mapping[Hashable, object]) -> tuple[list[tuple[str, ...]], str | None]:
    """The tags of each pair (one category each) and the failure, if the call failed (then all empty)."""
    if not pairs:
        return [], None
    res = result_for(results, ("qa_tags", pid, file))  # type: ignore[arg-type]
    if res.status != "ok":
        return [() for _ in pairs], f"thematic tagging failed for {file}: {failure_of(res)}"
    return [(t,) for t in res.value.tags], None


def plan_category(pid: str, person: str, profile: str, questions: Sequence[str], model: ModelConfig) -> PlannedCall:
    messages = personality_category.build_messages(person, profile, questions)
    request = contract_request(personality_category, messages, item_id=pid)
    return PlannedCall(("personality_category", pid), model, request, {})


def category(pid: str, results: Mapping[Hashable, object]) -> tuple[str | None, str]:
    """(category or None, reason or failure)."""
    res = result_for(results, ("personality_category", pid))  # type: ignore[arg-type]
    if res.status != "ok":
        return None, f"category call failed: {failure_of(res)}"
    return res.value.category, res.value.reason
