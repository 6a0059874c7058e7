"""Thematic tagging: each QA pair of one interview into one of the paper's four thematic categories.

The categories (seed 001, section 2.1; ``schema.THEMATIC_CATEGORIES``) are what a question probes:
Social Identity, Motivations and Values, Identity Narrative, Psychological Traits. One call tags one
interview's pairs, so the model sees them in context and the number of calls stays per transcript;
the reply gives exactly one category per pair, in order. The result is written to the pair's
``tags``, which the report's "Contradiction ratio by question tag" breaks down by.
"""

from __future__ import annotations

from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ..schema import THEMATIC_CATEGORIES
from ._guards import Instructions, format_literals
from ._json import fail, load_object, require_choice, require_keys
from .generation import one_line

NAME = "thematic_tagging"
CONTRACT_VERSION = "1"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: thematic tagging"
RESPONSE_CHARS = 600

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You classify interview questions by what they probe about the person answering.\n"
    "Categories:\n"
    "- Social Identity: groups, roles and relations the person belongs to (family, nation, party, community);\n"
    "- Motivations and Values: what the person wants, believes right, aims for, and why;\n"
    "- Identity Narrative: the person's story: past events, experiences, turning points, plans;\n"
    "- Psychological Traits: temperament, feelings, habits of mind, how the person reacts.\n"
    "Give exactly one category per pair, in the order given.\n"
    'Reply with exactly one JSON object: {"tags": ["Identity Narrative", ...]}'
)

USER_HEADER = "Pairs ({n}):"
PAIR_LINE = "[{i}] Q: {question}\n    A: {response}"

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_HEADER))


class Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    tags: tuple[Literal[THEMATIC_CATEGORIES], ...]  # type: ignore[valid-type]


def build_messages(pairs: Sequence[tuple[str, str]]) -> list[Message]:
    """Instructions, then each (question, response) pair numbered from 1 (responses cut to RESPONSE_CHARS).

    Raises:
        ValueError: no pair.
    """
    if not pairs:
        raise ValueError("thematic tagging needs at least one pair")
    lines = [USER_HEADER.format(n=len(pairs))]
    lines += [PAIR_LINE.format(i=i, question=one_line(q), response=one_line(r)[:RESPONSE_CHARS])
              for i, (q, r) in enumerate(pairs, start=1)]
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content="\n".join(lines))]


def parse(raw: str, n_pairs: int | None = None) -> Result:
    """``{"tags": [category, ...]}``: one of the four categories per pair, ``n_pairs`` of them when bound.

    Raises:
        ContractParseError: missing/additional fields, not an array, a count other than ``n_pairs``,
            a value outside the four categories (exact spelling).
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("tags",), NAME, raw)
    tags = obj["tags"]
    if not isinstance(tags, list) or not tags:
        fail(NAME, "tags must be a non-empty array", raw)
    if n_pairs is not None and len(tags) != n_pairs:
        fail(NAME, f"tags has {len(tags)} entries, {n_pairs} pairs were asked", raw)
    return Result(tags=tuple(require_choice(t, f"tags[{i}]", THEMATIC_CATEGORIES, NAME, raw) for i, t in enumerate(tags)))


MAX_TOKENS = 2000


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
