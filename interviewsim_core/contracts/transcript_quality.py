"""Transcript quality control: is this an interview in which the person answers questions?

The paper's automated quality stage (seed 001, section 2.1): group discussions, scripted monologues
and content where the person does not speak are excluded. The model sees the attributed turns'
statistics and an excerpt with each turn's role, and answers with a kind and a reason; the verdict
(keep when the kind is ``interview``) and the reason are kept in the curation tables, so an excluded
transcript is listed with why, never silently dropped.
"""

from __future__ import annotations

from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import load_object, require_choice, require_keys, require_text
from .generation import one_line

NAME = "transcript_quality"
CONTRACT_VERSION = "1"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: transcript quality control"
KINDS = ("interview", "group_discussion", "scripted_monologue", "person_silent")
EXCERPT_TURNS = 16
EXCERPT_CHARS = 240

REASON_PLACEHOLDER = "<one sentence on what decided it>"
"""The reply shape's placeholder: the template shows it, the parser refuses it as a reason."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You check whether a transcript is an interview in which the named person answers questions.\n"
    "Kinds:\n"
    "- interview: an interviewer (or several) asks the person questions and the person answers;\n"
    "- group_discussion: several people talk among themselves and the person is one voice of many;\n"
    "- scripted_monologue: the person reads or speaks at length with (almost) no question answered;\n"
    "- person_silent: the person does not speak, or says almost nothing.\n"
    "Reply with exactly one JSON object: "
    '{"kind": "interview", "reason": "' + REASON_PLACEHOLDER + '"}'
)

USER_HEADER = "Person: {person}\nStatistics: {stats}\nExcerpt ({n} turns):"
TURN_PREFIX = "- "

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_HEADER))


class Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["interview", "group_discussion", "scripted_monologue", "person_silent"]
    reason: str

    @property
    def keep(self) -> bool:
        """The verdict: only an interview is kept."""
        return self.kind == "interview"


def stats_line(stats: dict[str, int]) -> str:
    """``key=value`` pairs in a fixed order: what the turn statistics say, readable by model and responder."""
    return " ".join(f"{k}={v}" for k, v in stats.items())


def build_messages(person: str, stats: dict[str, int], excerpt: Sequence[tuple[str, str]]) -> list[Message]:
    """Instructions, the person, the turn statistics, then ``- role (label): text`` per excerpt turn."""
    lines = [USER_HEADER.format(person=one_line(person), stats=stats_line(stats), n=len(excerpt[:EXCERPT_TURNS]))]
    lines += [TURN_PREFIX + f"{role}: {one_line(text)[:EXCERPT_CHARS]}" for role, text in excerpt[:EXCERPT_TURNS]]
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content="\n".join(lines))]


def parse(raw: str) -> Result:
    """Exactly ``{"kind": one of KINDS, "reason": non-blank}``.

    Raises:
        ContractParseError: missing/additional fields, an unknown kind, a blank reason, not one object.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("kind", "reason"), NAME, raw)
    return Result(kind=require_choice(obj["kind"], "kind", KINDS, NAME, raw),
                  reason=reject_placeholder(require_text(obj["reason"], "reason", NAME, raw), "reason", (REASON_PLACEHOLDER,), NAME, raw))


MAX_TOKENS = 300


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
