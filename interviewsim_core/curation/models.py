"""The typed values passed between curation steps (frozen pydantic models).

Each step reads the previous step's values and returns new ones; nothing is mutated, so a step can
be re-run on its own (a Dagster partition, a test) from what the step before it wrote.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Role = Literal["person", "interviewer", "other"]
ROLES: tuple[Role, ...] = ("person", "interviewer", "other")

Format = Literal["text", "vtt", "srt", "diarised_json"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ManifestRow(_Frozen):
    """One manifest row: exactly the fields issue 31 names (extra fields are refused by the reader)."""

    file: str
    personality_id: str
    person_name: str
    date: str
    """ISO date (YYYY-MM-DD); orders a personality's interviews into ``sequence``."""
    title: str = ""
    """The transcript's title as published ("News conference"); kept in provenance, never read as a speaker."""
    addressed_as: tuple[str, ...] = ()
    """How this transcript's speaker labels address the person (e.g. "The President"). Per row, because an
    office belongs to a date: it is the manifest that says who held it then."""
    aliases: tuple[str, ...] = ()
    source_url: str = ""
    profile_file: str = ""
    long_profile_file: str = ""


class Turn(_Frozen):
    """One speaker turn in transcript order: the label as written (or diarisation id), and its text."""

    index: int
    label: str
    """Speaker label as written, without its trailing punctuation; "" for an unlabelled caption."""
    text: str
    line: int
    """1-based line (text/captions) or segment number (diarised JSON) where the turn starts."""


class Transcript(_Frozen):
    """An ingested transcript: its turns and what was removed on the way (counts by kind)."""

    file: str
    format: Format
    turns: tuple[Turn, ...]
    removed: dict[str, int]


class Attribution(_Frozen):
    """Who a speaker label is, and who decided: the rule (with the rule's name) or the model."""

    label: str
    role: Role
    decided_by: Literal["rule", "answerer", "review", "model", "failed"]
    reason: str


class QAPairDraft(_Frozen):
    """A question-answer pair from one transcript: normalised texts, and the raw spans they came from."""

    question: str
    response: str
    raw_question: str
    raw_response: str
    question_turn: int
    response_turns: tuple[int, ...]


def failure_of(result: object) -> str:
    """A failed call's cause in one line (a provider's traceback stays in the cache and call log, not in reports)."""
    text = getattr(result, "parse_error", None) or getattr(result, "error", None) or getattr(result, "status", "failed")
    return (str(text).strip().splitlines() or ["failed"])[0][:300]
