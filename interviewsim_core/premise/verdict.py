"""The premise verdict, combined in code exactly as seed 002 states (never by either judge).

PASS iff
  pass 1: no UNKNOWN slot among the slots the claim requires, and licensed_inference != NONE;
  pass 2: interpretation == MATCH, no unsupported elements, force preserved, and time_status in
          {ANCHORED_CORRECTLY, HEDGED_APPROPRIATELY, SELF_ANCHORING, ANCHORED_TO_BAD_TIMESTAMP}
          (the last is an input failure, not a deriver failure, so it does not fail the deriver).
Otherwise FAIL, with primary_cause taken from pass 2's attribution, verbatim.

pass 2 may call a conclusion clean ("NONE") while a pass-1 condition still fails it (typically an
UNKNOWN slot pass 2 did not count as a defect). The row then reads FAIL with primary_cause "NONE":
the seed makes primary_cause pass 2's word, and inventing a cause in code would put labels into the
pass-2 column (and into the offline label clusters) that no judge wrote. Why it failed is always
in ``reasons``, so nothing is lost.

Which slots a claim requires: pass 1's own rubric already encodes it. A slot the claim does not
need is written N/A (scope of a simple event) or SELF_ANCHORING (time of an enduring attribute);
UNKNOWN is reserved for a slot that is needed and cannot be filled. So every slot that reads
UNKNOWN (listed in ``unknown_slots`` or written as UNKNOWN) is a required slot that is missing,
scope included: a generalisation whose conditions are UNKNOWN cannot be used as a premise either.

Verdicts other than PASS/FAIL: INVALID when either pass broke its contract after the gateway's
re-asks, ERROR when a call failed at the transport level; neither is counted as PASS or FAIL.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..contracts.premise import Attribution, Pass1Result, Pass2Result

ALLOWED_TIME_STATUSES = frozenset(
    {"ANCHORED_CORRECTLY", "HEDGED_APPROPRIATELY", "SELF_ANCHORING", "ANCHORED_TO_BAD_TIMESTAMP"}
)

VerdictLabel = Literal["PASS", "FAIL", "INVALID", "ERROR"]


class Verdict(BaseModel):
    """One conclusion's verdict and why.

    ``reasons`` names each failed condition (empty on PASS): ``pass1_unknown_slot:<slot>``,
    ``pass1_no_licensed_inference``, ``pass2_interpretation:<value>``,
    ``pass2_unsupported_elements:<n>``, ``pass2_force_not_preserved``, ``pass2_time_status:<value>``.
    """

    model_config = ConfigDict(frozen=True)

    verdict: VerdictLabel
    primary_cause: str | None
    reasons: tuple[str, ...]
    decontextuality_score: float | None
    attributions: tuple[Attribution, ...]


def failed_conditions(p1: Pass1Result, p2: Pass2Result) -> tuple[str, ...]:
    """Every condition of the seed's combination that does not hold, in the seed's order."""
    reasons = [f"pass1_unknown_slot:{s}" for s in p1.unknown()]
    if not p1.licenses_inference:
        reasons.append("pass1_no_licensed_inference")
    if p2.interpretation != "MATCH":
        reasons.append(f"pass2_interpretation:{p2.interpretation}")
    if p2.unsupported_elements:
        reasons.append(f"pass2_unsupported_elements:{len(p2.unsupported_elements)}")
    if not p2.force_preserved:
        reasons.append("pass2_force_not_preserved")
    if p2.time_status not in ALLOWED_TIME_STATUSES:
        reasons.append(f"pass2_time_status:{p2.time_status}")
    return tuple(reasons)


def combine(p1: Pass1Result, p2: Pass2Result) -> Verdict:
    """Combine both passes into PASS or FAIL.

    On FAIL the primary cause is pass 2's ``primary_cause`` exactly as written, "NONE" included;
    the failed conditions themselves are in ``reasons``.
    """
    reasons = failed_conditions(p1, p2)
    if not reasons:
        return Verdict(
            verdict="PASS",
            primary_cause=None,
            reasons=(),
            decontextuality_score=p1.decontextuality_score,
            attributions=p2.failure_attribution,
        )
    return Verdict(
        verdict="FAIL",
        primary_cause=p2.primary_cause,
        reasons=reasons,
        decontextuality_score=p1.decontextuality_score,
        attributions=p2.failure_attribution,
    )


def unusable(kind: Literal["INVALID", "ERROR"], stage: str, p1: Pass1Result | None = None) -> Verdict:
    """A verdict for a conclusion whose judging broke down at ``stage`` (pass1 or pass2)."""
    return Verdict(
        verdict=kind,
        primary_cause=None,
        reasons=(f"{stage}_{kind.lower()}",),
        decontextuality_score=p1.decontextuality_score if p1 is not None else None,
        attributions=(),
    )
