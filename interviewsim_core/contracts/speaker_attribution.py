"""Speaker attribution: who is each speaker label the rule could not place (the paper's first
structuring stage, seed 001 section 2.1).

The curation rule (``curation/attribution.py``) places the labels it can (the person's name,
aliases, how the manifest says labels address the person on that date, the usual interviewer labels); only the rest
reach the model: unknown labels, diarisation ids (``SPEAKER_00``) and unlabelled captions. Each
item comes with a few of its turns so the model decides from what was said, and the reply gives
exactly one role per item, in order, so no label is silently left out.
"""

from __future__ import annotations

import json
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import fail, load_object, require_choice, require_keys, require_text
from .generation import one_line

NAME = "speaker_attribution"
CONTRACT_VERSION = "2"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: speaker attribution"
ROLES = ("person", "interviewer", "other")
SAMPLE_TURNS = 3
SAMPLE_CHARS = 300

REASON_PLACEHOLDER = "<why, in a few words>"
"""The reply shape's placeholder: the template shows it, the parser refuses it as a reason."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You read speaker labels from one interview transcript and decide who each one is.\n"
    "Roles:\n"
    "- person: the interviewed person named below (under any name, title or speaker id);\n"
    "- interviewer: someone who asks the person questions (journalist, host, audience member);\n"
    "- other: anyone else (another official, a moderator's announcement, an editor's note).\n"
    "Decide from what each speaker says and from the labels already known. Give one entry per item, "
    "in the order given, and nothing else.\n"
    "Reply with exactly one JSON object: "
    '{"speakers": [{"item": 1, "role": "person", "reason": "' + REASON_PLACEHOLDER + '"}, ...]}'
)

USER_HEADER = "Person: {person}\nAddressed as on this date: {addressed_as}\nAliases: {aliases}\nDate: {date}\n" \
              "Labels already placed: {known}\nItems to place ({n}):"
ITEM_LINE = "[{item}] label {label}: {turns} turns, {words} words, {asks} asking"
SAMPLE_PREFIX = "    > "

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_HEADER))


class Item(BaseModel):
    """One label (or one unlabelled caption, label ``#<turn>``) to place, with sample turns."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    label: str
    turns: int
    words: int
    asks: int
    samples: tuple[str, ...]


class Speaker(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    item: int
    role: Literal["person", "interviewer", "other"]
    reason: str


class Result(BaseModel):
    """One role per item, in the order asked."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    speakers: tuple[Speaker, ...]


def build_messages(person: str, addressed_as: Sequence[str], aliases: Sequence[str], date: str, known: dict[str, str],
                   items: Sequence[Item]) -> list[Message]:
    """Instructions, then the person, what the rule already placed, and the items with sample turns.

    Raises:
        ValueError: no item to place.
    """
    if not items:
        raise ValueError("speaker attribution needs at least one item")
    placed = "; ".join(f"{k!r}={v}" for k, v in sorted(known.items())) or "none"
    lines = [USER_HEADER.format(person=one_line(person), addressed_as="; ".join(one_line(a) for a in addressed_as) or "none",
                                aliases="; ".join(aliases) or "none", date=date, known=placed, n=len(items))]
    for i, it in enumerate(items, start=1):
        lines.append(ITEM_LINE.format(item=i, label=json.dumps(it.label, ensure_ascii=False), turns=it.turns, words=it.words, asks=it.asks))
        lines += [SAMPLE_PREFIX + one_line(s)[:SAMPLE_CHARS] for s in it.samples[:SAMPLE_TURNS]]
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content="\n".join(lines))]


def parse(raw: str, n_items: int | None = None) -> Result:
    """``{"speakers": [{"item", "role", "reason"}, ...]}``: items 1..n in order, one each.

    Args:
        n_items: how many items were asked (the pipeline binds it); None accepts any count >= 1.

    Raises:
        ContractParseError: missing/additional fields, a role outside person/interviewer/other, a blank
            reason, items out of order, missing or repeated, or a count other than ``n_items``.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("speakers",), NAME, raw)
    rows = obj["speakers"]
    if not isinstance(rows, list) or not rows:
        fail(NAME, "speakers must be a non-empty array", raw)
    if n_items is not None and len(rows) != n_items:
        fail(NAME, f"speakers has {len(rows)} entries, {n_items} items were asked", raw)
    out = []
    for i, row in enumerate(rows, start=1):
        where = f"speakers[{i - 1}]"
        if not isinstance(row, dict):
            fail(NAME, f"{where} must be an object", raw)
        require_keys(row, ("item", "role", "reason"), NAME, raw, where)
        if row["item"] != i or isinstance(row["item"], bool):
            fail(NAME, f"{where}.item must be {i} (items in the order asked), got {row['item']!r}", raw)
        role = require_choice(row["role"], f"{where}.role", ROLES, NAME, raw)
        out.append(Speaker(item=i, role=role, reason=reject_placeholder(require_text(row["reason"], f"{where}.reason", NAME, raw), f"{where}.reason", (REASON_PLACEHOLDER,), NAME, raw)))
    return Result(speakers=tuple(out))


MAX_TOKENS = 1200


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
