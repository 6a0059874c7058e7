"""Fact summary: the evaluation-only evidence the Factual Consistency judge reads.

Built from one personality's *held-out* responses only, it states the established facts, stated
opinions and recurring characteristics those responses support, with no outside knowledge or
inference, keeping uncertainty and changes over time, and with no citations, links, source ids or
provenance fields. Because it is derived from held-out references it must never enter a
generation, retrieval or hybrid context (the generation contract takes question text only).
"""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import load_object, require_keys, require_text
from .generation import one_line

NAME = "fact_summary"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: placeholders and echoes of the instructions are invalid (issue 22)

MARKER = "## InterviewSim task: evaluation fact summary"

SUMMARY_PLACEHOLDER = "<the fact summary as plain prose>"
EXPLANATION_PLACEHOLDER = "<how the summary was built from the responses>"
PLACEHOLDERS = (SUMMARY_PLACEHOLDER, EXPLANATION_PLACEHOLDER)
"""The reply shape's placeholders: the template is built from them and the parser refuses them as content
(a placeholder summary would otherwise become the FC judge's evidence)."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You write a fact summary about one person from a collection of their own interview "
    "responses. It will be used only as evidence for checking other statements against.\n\n"
    "Include:\n"
    "- established facts the responses state (events, roles, dates, places, relationships);\n"
    "- opinions the person states;\n"
    "- recurring characteristics that several responses support.\n\n"
    "Rules:\n"
    "- Use only the responses given. Do not add outside knowledge, even if you recognise the person.\n"
    "- Do not infer anything the responses do not support.\n"
    "- Preserve uncertainty: hedged or tentative statements stay hedged.\n"
    "- Preserve changes over time: if the person's view or situation changed, say so and keep both.\n"
    "- No citations, links, URLs, source identifiers, response numbers or other provenance fields.\n\n"
    "Reply with exactly one JSON object and nothing else, in this shape:\n"
    '{"summary": "' + SUMMARY_PLACEHOLDER + '", "explanation": "' + EXPLANATION_PLACEHOLDER + '"}\n'
    "No other fields."
)

USER_HEADER = "Personality ID: {personality_id}\nResponses ({n}):"
RESPONSE_PREFIX = "- "

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_HEADER))
"""The contract's own wording, for the echo rule (``_guards``); the held-out responses are data."""


class Result(BaseModel):
    """One personality's fact summary and the builder's note on how it was made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: str
    explanation: str


def build_messages(personality_id: str, responses: Sequence[str]) -> list[Message]:
    """Instructions first, then the held-out responses, one per line.

    Args:
        personality_id: whose responses these are.
        responses: that personality's held-out responses (texts only: no ids, so none can be cited).

    Raises:
        ValueError: no responses, or a blank one.
    """
    if isinstance(responses, str):
        raise TypeError("responses must be a sequence of texts, not one string")
    texts = [one_line(r) for r in responses]
    if not texts or any(not t for t in texts):
        raise ValueError("fact summary needs a non-empty collection of non-blank responses")
    lines = [USER_HEADER.format(personality_id=personality_id, n=len(texts))]
    lines += [RESPONSE_PREFIX + t for t in texts]
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content="\n".join(lines))]


def parse(raw: str) -> Result:
    """Exactly ``{"summary": non-blank, "explanation": non-blank}``, optionally fenced.

    Raises:
        ContractParseError: additional or missing fields, duplicate keys, non-string or blank values,
            a value that is the template's placeholder, an echo of the instructions.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("summary", "explanation"), NAME, raw)
    values = {f: reject_placeholder(require_text(obj[f], f, NAME, raw), f, PLACEHOLDERS, NAME, raw)
              for f in ("summary", "explanation")}
    return Result(**values)


# -- output shape (llm/constraints.py): sent as a constraint where the model supports one --------
MAX_TOKENS = 1500
"""Cap on a reply: a summary of one person's held-out responses and a note on how it was built."""


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
