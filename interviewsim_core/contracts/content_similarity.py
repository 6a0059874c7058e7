"""Content Similarity (CS): does a generated response carry the same content as the real one?

The judge sees one held-out reference response and one generated candidate and scores semantic
content, not wording, tone or length, on the seed's 1-5 rubric. The aggregate is the arithmetic
mean of the scores (metrics package); the explanation is kept for inspection only.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import load_object, require_int, require_keys, require_text

NAME = "content_similarity"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: placeholders and echoes of the instructions are invalid (issue 22)

MARKER = "## InterviewSim task: content similarity judgment"

RUBRIC = (
    "1: the candidate contradicts or misses the core content of the reference;\n"
    "2: limited overlap with significant differences;\n"
    "3: some overlap, but key information is missing;\n"
    "4: the main points are preserved with minor differences;\n"
    "5: the same core ideas as the ground-truth (reference) answer."
)

SCORE_PLACEHOLDER = "<integer 1-5>"
EXPLANATION_PLACEHOLDER = "<why this score, citing the two responses>"
PLACEHOLDERS = (SCORE_PLACEHOLDER, EXPLANATION_PLACEHOLDER)
"""The reply shape's placeholders: the template is built from them and the parser refuses them as content."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You compare a candidate interview response with the reference response the person actually "
    "gave. Judge semantic content only: the information, claims and ideas. Ignore differences in "
    "wording, tone, style and length.\n\n"
    "Score the candidate with an integer from 1 to 5:\n" + RUBRIC + "\n\n"
    "Reply with exactly one JSON object and nothing else, in this shape:\n"
    '{"score": ' + SCORE_PLACEHOLDER + ', "explanation": "' + EXPLANATION_PLACEHOLDER + '"}\n'
    "No other fields."
)

USER_TEMPLATE = (
    "Reference response:\n<reference>\n{reference}\n</reference>\n\n"
    "Candidate response:\n<candidate>\n{candidate}\n</candidate>"
)

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_TEMPLATE))
"""The contract's own wording, for the echo rule (``_guards``); the responses compared are data."""

SCORE_MIN, SCORE_MAX = 1, 5


class Result(BaseModel):
    """One CS judgment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    score: int = Field(ge=SCORE_MIN, le=SCORE_MAX)
    explanation: str


def build_messages(reference: str, candidate: str) -> list[Message]:
    """Rubric first (identical for every call), then the two responses.

    Raises:
        ValueError: a blank reference or candidate (nothing to compare).
    """
    if not reference.strip() or not candidate.strip():
        raise ValueError("reference and candidate must both be non-blank")
    user = USER_TEMPLATE.format(reference=reference.strip(), candidate=candidate.strip())
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content=user)]


def parse(raw: str) -> Result:
    """Exactly ``{"score": int 1..5, "explanation": non-blank}``, optionally fenced.

    Raises:
        ContractParseError: any other shape, a boolean or float score, an out-of-range score,
            a blank explanation, an explanation that is the template's placeholder, an echo of
            the instructions, duplicate keys or text around the object.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("score", "explanation"), NAME, raw)
    score = require_int(obj["score"], "score", SCORE_MIN, SCORE_MAX, NAME, raw)
    explanation = reject_placeholder(require_text(obj["explanation"], "explanation", NAME, raw), "explanation",
                                     PLACEHOLDERS, NAME, raw)
    return Result(score=score, explanation=explanation)


# -- output shape (llm/constraints.py): sent as a constraint where the model supports one --------
MAX_TOKENS = 320
"""Cap on a reply: a score and a few sentences of explanation fit in well under this."""


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
