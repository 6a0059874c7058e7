"""Quality control (model): per transcript, is it an interview in which the person answers questions?

Runs on attributed turns (after ``attribution``), since "the person does not speak" and "the person
is one voice of many" are only visible once each turn has a role. The statistics the prompt carries
are computed here, once, from the roles and the QA rule's question test.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from ..contracts import transcript_quality as contract
from ..llm.types import ModelConfig
from ..pipeline.calls import PlannedCall, contract_request, result_for
from .models import failure_of, Role, Transcript
from .structuring import asks


def turn_stats(t: Transcript, roles: Sequence[Role]) -> dict[str, int]:
    """Words per role, the interviewer's questions, and how many of them the person answered next."""
    words = {r: 0 for r in ("person", "interviewer", "other")}
    questions = answered = 0
    for i, (turn, role) in enumerate(zip(t.turns, roles, strict=True)):
        words[role] += len(turn.text.split())
        if role == "interviewer" and asks(turn.text):
            questions += 1
            answered += i + 1 < len(roles) and roles[i + 1] == "person"
    speakers = len({turn.label for turn in t.turns if turn.label})
    return {"turns": len(t.turns), "speakers": speakers, "person_words": words["person"],
            "interviewer_words": words["interviewer"], "other_words": words["other"],
            "questions": questions, "answered_questions": int(answered)}


def plan(pid: str, person: str, t: Transcript, roles: Sequence[Role], model: ModelConfig) -> PlannedCall:
    excerpt = [(f"{role} ({turn.label or 'unlabelled'})", turn.text) for turn, role in zip(t.turns, roles)]
    messages = contract.build_messages(person, turn_stats(t, roles), excerpt)
    request = contract_request(contract, messages, item_id=f"{pid}/{t.file}")
    return PlannedCall(("transcript_quality", pid, t.file), model, request, {"file": t.file})


def verdict(pid: str, t: Transcript, results: Mapping[Hashable, object]) -> tuple[bool, str, str]:
    """(keep, kind, reason); a failed call excludes the transcript with the failure as its reason."""
    res = result_for(results, ("transcript_quality", pid, t.file))  # type: ignore[arg-type]
    if res.status != "ok":
        return False, "failed", f"quality call failed: {failure_of(res)}"
    return res.value.keep, res.value.kind, res.value.reason
