"""The canonical ``prepared_input.json`` as typed, frozen models (INPUT_SCHEMA.md).

The loader (``loader.py``) does the strict checking and reports every problem at once;
these models are what the rest of the code receives once a document is known good.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = "1.0"

THEMATIC_CATEGORIES = (
    "Social Identity",
    "Motivations and Values",
    "Identity Narrative",
    "Psychological Traits",
)


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class QAPair(_Frozen):
    qa_id: str
    question: str
    response: str
    tags: tuple[str, ...] = ()


class Interview(_Frozen):
    interview_id: str
    sequence: int
    qa_pairs: tuple[QAPair, ...]


class PersonalityText(_Frozen):
    profile: str
    long_profile: str


class PreparedInput(_Frozen):
    schema_version: str
    personality_id: str
    personality: PersonalityText
    interviews: tuple[Interview, ...]
