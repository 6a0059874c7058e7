"""Personality category: the person into one of the paper's eight categories (seed 001, Figure 3b).

The report's "Contradiction ratio by personality category" needs each personality's category; the
curation asks once per personality, from the profile texts and a sample of the questions put to
the person (questions only: what the person is asked about says what they are known for).
"""

from __future__ import annotations

from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import load_object, require_choice, require_keys, require_text
from .generation import one_line

NAME = "personality_category"
CONTRACT_VERSION = "1"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: personality category"
CATEGORIES = ("Film & Television", "Music", "Sports", "Business & Technology", "Science & Academia",
              "Media & Internet", "Arts & Culture", "Public Service & Social Influence")
SAMPLE_QUESTIONS = 20

REASON_PLACEHOLDER = "<one sentence>"
"""The reply shape's placeholder: the template shows it, the parser refuses it as a reason."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You place one interviewed person in exactly one category of public life: "
    + "; ".join(CATEGORIES) + ".\n"
    "Decide from the profile and the questions interviewers put to the person.\n"
    'Reply with exactly one JSON object: {"category": "Music", "reason": "' + REASON_PLACEHOLDER + '"}'
)

USER_HEADER = "Person: {person}\nProfile: {profile}\nQuestions ({n}):"
QUESTION_PREFIX = "- "

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_HEADER))


class Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    reason: str


def build_messages(person: str, profile: str, questions: Sequence[str]) -> list[Message]:
    """Instructions, the person, the profile, then up to SAMPLE_QUESTIONS questions, one per line."""
    qs = [one_line(q) for q in questions[:SAMPLE_QUESTIONS]]
    lines = [USER_HEADER.format(person=one_line(person), profile=one_line(profile) or "none", n=len(qs))]
    lines += [QUESTION_PREFIX + q for q in qs]
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content="\n".join(lines))]


def parse(raw: str) -> Result:
    """Exactly ``{"category": one of CATEGORIES, "reason": non-blank}``.

    Raises:
        ContractParseError: missing/additional fields, a category outside the eight (exact spelling),
            a blank reason.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("category", "reason"), NAME, raw)
    return Result(category=require_choice(obj["category"], "category", CATEGORIES, NAME, raw),
                  reason=reject_placeholder(require_text(obj["reason"], "reason", NAME, raw), "reason", (REASON_PLACEHOLDER,), NAME, raw))


MAX_TOKENS = 300


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
