"""Scripted gateway and fixtures for the premise tests.

``ScriptedPremiseGateway.run_many`` behaves like the gateway's contract: each request's own parser
decides validity, an output that breaks it is re-asked up to ``model.max_reasks`` times, then the
call is ``invalid`` with the raw text kept; a script may return ``FAIL`` for a transport failure.
It records every request so tests can inspect the exact prompts sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Sequence

from interviewsim_core.contracts import premise as c
from interviewsim_core.errors import ContractParseError
from interviewsim_core.llm.types import Attempt, CallRequest, CallResult, ModelConfig
from interviewsim_core.schema import Interview, PersonalityText, PreparedInput, QAPair
from interviewsim_core.split import split_personality

FAIL = object()

Script = Callable[[CallRequest, int], object]
"""(request, attempt index) -> raw text, or FAIL."""


def pass1_obj(**over) -> dict:
    d = {
        "subject": "P1", "predicate_and_force": "said", "object_or_content": "the trip was long",
        "time": "interview I1, sequence 1", "scope": "N/A", "unknown_slots": [],
        "licensed_inference": "P1 may avoid long trips.", "decontextuality_score": 0.8, "labels": [],
        "bundled": False, "notes": "",
    }
    d.update(over)
    return d


def pass2_obj(**over) -> dict:
    d = {
        "interpretation": "MATCH", "interpretation_notes": "", "unsupported_elements": [],
        "force_preserved": True, "force_notes": "", "time_status": "HEDGED_APPROPRIATELY",
        "failure_attribution": [], "labels": [], "primary_cause": "NONE",
    }
    d.update(over)
    return d


def statement_of(req: CallRequest) -> str:
    text = req.messages[0]["content"]
    marker = "Statement to evaluate: " if req.contract == c.PASS1_NAME else "Conclusion under evaluation: "
    rest = text.rpartition(marker)[2]
    return rest.partition("\n\nBlind reconstruction")[0].strip()


def clean_script(req: CallRequest, attempt: int) -> str:
    return json.dumps(pass1_obj() if req.contract == c.PASS1_NAME else pass2_obj())


@dataclass
class ScriptedPremiseGateway:
    script: Script = clean_script
    calls: list[tuple[ModelConfig, CallRequest, int]] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)

    def run_many(self, calls: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]:
        self.batches.append(len(calls))
        return [self._one(m, r) for m, r in calls]

    def requests(self, contract: str) -> list[CallRequest]:
        return [r for _, r, a in self.calls if r.contract == contract and a == 0]

    def _one(self, model: ModelConfig, req: CallRequest) -> CallResult:
        attempts: list[Attempt] = []
        for i in range(model.max_reasks + 1):
            self.calls.append((model, req, i))
            raw = self.script(req, i)
            if raw is FAIL:
                return CallResult(status="failed", error="connection refused", attempts=(Attempt(error="refused"),),
                                  model=model.model)
            try:
                value = req.parser(raw)
            except ContractParseError as exc:
                attempts.append(Attempt(raw=raw, parse_error=exc.reason))
                continue
            attempts.append(Attempt(raw=raw))
            return CallResult(status="ok", value=value, raw=raw, attempts=tuple(attempts), model=model.model,
                              calls_made=len(attempts), prompt_tokens=7, completion_tokens=3, cost_usd=0.0)
        return CallResult(status="invalid", raw=attempts[-1].raw, parse_error=attempts[-1].parse_error,
                          attempts=tuple(attempts), model=model.model, calls_made=len(attempts))


def tiny_split(pid: str = "P1"):
    """Five interviews, one held out (I5): two QA pairs each."""
    interviews = tuple(
        Interview(
            interview_id=f"I{n}",
            sequence=n,
            qa_pairs=(
                QAPair(qa_id=f"Q{n}a", question=f"Question {n}a?", response=f"Answer {n}a about Boston.", tags=()),
                QAPair(qa_id=f"Q{n}b", question=f"Question {n}b?", response=f"Answer {n}b about tennis.", tags=()),
            ),
        )
        for n in range(1, 6)
    )
    doc = PreparedInput(schema_version="1.0", personality_id=pid,
                        personality=PersonalityText(profile="p", long_profile="lp"), interviews=interviews)
    return split_personality(doc)
