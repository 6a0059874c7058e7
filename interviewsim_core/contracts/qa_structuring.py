"""QA structuring: question-answer pairs from one transcript's attributed turns (the paper's second
structuring stage, seed 001 section 2.1).

The model sees every turn with its index and role and returns the pairs: which interviewer turn is
the question, which of the person's turns make the reply, and both texts with disfluencies removed
and fragments repaired in the person's own words. The parser holds the model to that: a question
must be an interviewer turn, a reply only the person's turns after it and before anyone else
speaks, and at least ``MIN_KEPT`` of a cleaned text's words must come from its raw span (cleaning,
not paraphrase). The raw spans are rebuilt from the turn indices, so they are never the model's.
"""

from __future__ import annotations

import re
from typing import Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals
from ._json import fail, load_object, require_keys, require_text

NAME = "qa_structuring"
CONTRACT_VERSION = "1"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: question-answer structuring"
MIN_KEPT = 0.9
"""Share of a cleaned text's words that must appear in its raw span."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You turn one interview transcript into question-answer pairs.\n"
    "- A question is an interviewer turn that asks the person something.\n"
    "- Its response is the person's reply: the person's turns that follow it, up to the next turn "
    "that is not the person's.\n"
    "- Clean both texts: remove disfluencies (uh, um, repeated words) and repair broken fragments, "
    "keeping the speaker's own words and style. Never paraphrase or summarise.\n"
    "- Leave out questions the person does not answer and the person's turns that answer no question.\n"
    "Reply with exactly one JSON object: "
    '{"pairs": [{"question_turn": 3, "response_turns": [4, 5], "question": "...", "response": "..."}]}'
)

USER_HEADER = "Person: {person}\nTurns ({n}):"
TURN_LINE = "[{i}] {role} ({label}): {text}"

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_HEADER))


class Pair(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    question_turn: int
    response_turns: tuple[int, ...]
    question: str
    response: str


class Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    pairs: tuple[Pair, ...]


def build_messages(person: str, turns: Sequence[tuple[str, str, str]]) -> list[Message]:
    """Instructions, then every turn as ``[i] role (label): text`` ((role, label, text) in order)."""
    lines = [USER_HEADER.format(person=" ".join(person.split()), n=len(turns))]
    lines += [TURN_LINE.format(i=i, role=role, label=label or "unlabelled", text=" ".join(text.split()))
              for i, (role, label, text) in enumerate(turns)]
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content="\n".join(lines))]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold())


def _kept(clean: str, raw: str) -> float:
    words = _words(clean)
    have = set(_words(raw))
    return sum(w in have for w in words) / len(words) if words else 0.0


def parse(raw: str, turns: Sequence[tuple[str, str, str]] | None = None) -> Result:
    """``{"pairs": [...]}``; with ``turns`` (the pipeline binds them) every pair is checked against them.

    Raises:
        ContractParseError: missing/additional fields, blank texts, a question turn that is not an
            interviewer's, a reply turn that is not the person's or not contiguous after the question,
            pairs out of order or overlapping, a cleaned text whose words are not the raw span's.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("pairs",), NAME, raw)
    if not isinstance(obj["pairs"], list):
        fail(NAME, "pairs must be an array", raw)
    out: list[Pair] = []
    last = -1
    for n, p in enumerate(obj["pairs"]):
        where = f"pairs[{n}]"
        if not isinstance(p, dict):
            fail(NAME, f"{where} must be an object", raw)
        require_keys(p, ("question_turn", "response_turns", "question", "response"), NAME, raw, where)
        q, rs = p["question_turn"], p["response_turns"]
        if isinstance(q, bool) or not isinstance(q, int) or not isinstance(rs, list) or not rs \
                or any(isinstance(r, bool) or not isinstance(r, int) for r in rs):
            fail(NAME, f"{where}: question_turn is an integer and response_turns a non-empty array of integers", raw)
        if q <= last or rs != list(range(q + 1, q + 1 + len(rs))):
            fail(NAME, f"{where}: the reply must be the turns right after its question, in order, after the previous pair", raw)
        last = rs[-1]
        pair = Pair(question_turn=q, response_turns=tuple(rs), question=require_text(p["question"], f"{where}.question", NAME, raw),
                    response=require_text(p["response"], f"{where}.response", NAME, raw))
        if turns is not None:
            if rs[-1] >= len(turns) or turns[q][0] != "interviewer" or any(turns[r][0] != "person" for r in rs):
                fail(NAME, f"{where}: the question must be an interviewer turn and the reply the person's turns", raw)
            span = " ".join(turns[r][2] for r in rs)
            for field, clean, source in (("question", pair.question, turns[q][2]), ("response", pair.response, span)):
                if _kept(clean, source) < MIN_KEPT:
                    fail(NAME, f"{where}.{field} is not the speaker's own words (under {MIN_KEPT:.0%} of its words are in the transcript)", raw)
        out.append(pair)
    return Result(pairs=tuple(out))


MAX_TOKENS = 16000


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
