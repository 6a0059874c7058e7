"""Shared fixtures for the premise tests: valid pass-1/pass-2 objects and a tiny split.

Scripted model runs use the real ``Gateway`` against ``llm.testing.FakeOpenAIServer`` (see
``test_premise_pipeline.py``), so no stand-in gateway is needed here.
"""

from __future__ import annotations

from interviewsim_core.schema import Interview, PersonalityText, PreparedInput, QAPair
from interviewsim_core.split import split_personality


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
