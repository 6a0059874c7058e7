"""MCQ answering: the simulated person answers every item of one held-out source interview at once.

One prompt per (personality, method, source interview): the paper's instruction and the
personality_id, the method's shared interview context (profile and/or training examples, rendered
exactly as for generation; for retrieval the caller passes the ordered de-duplicated union of the
items' retrieved pairs, for hybrid that union followed by the recent pairs), then the shuffled
items as contiguous Q1..QN with their labelled options.

Reply format: exactly N lines ``Q1: X`` .. ``QN: X``, in order, every index once, each X exactly one
of the labels offered for that item. Whitespace around the whole reply, around each line and after
the colon is ignored; blank lines, prose, a fence, ``Q1: A.`` or ``Q1: (A)`` are breaches. A breach
invalidates the whole group (the gateway may re-ask); its items then score as malformed.

Scoring follows the retained role of the chosen option: +1 correct, -1 the opposite/negation
option only, -0.5 anything else (near miss, misconception, a label the item does not offer, or
no parsed answer). Accuracy is 1 only for the correct option.
"""

from __future__ import annotations

import re
from typing import Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._json import fail
from .generation import ContextLike, one_line, render_context
from .mcq_generation import ShuffledItem

NAME = "mcq_answering"
CONTRACT_VERSION = "1"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: multiple-choice answering in character"

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "Speak as {personality_id}. Answer the following questions as {personality_id} would.\n"
    "Personality ID: {personality_id}\n"
    "Each question below has labelled options. Choose the one option this person would give as "
    "the true answer about themselves, using the context when it is given.\n"
    "Reply with exactly one line per question, in order, in the form 'Q<number>: <label>', and "
    "nothing else."
)

QUESTIONS_OPEN = "<questions>"
QUESTIONS_CLOSE = "</questions>"
FINAL_TEMPLATE = "Reply with exactly {n} line(s), Q1 to Q{n}, each 'Q<number>: <label>', nothing else."

REWARD_CORRECT = 1.0
REWARD_OPPOSITE = -1.0
REWARD_OTHER = -0.5
UNAVAILABLE = "unavailable"
MALFORMED = "malformed"

_LINE = re.compile(r"\AQ(?P<idx>[0-9]+):(?P<label>.*)\Z")


class Result(BaseModel):
    """The chosen label for each item, in item order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answers: tuple[str, ...]


def render_items(items: Sequence[ShuffledItem]) -> str:
    """Q1..QN with their options, one line each, inside a <questions> block."""
    blocks = []
    for i, item in enumerate(items, start=1):
        lines = [f"Q{i}: {one_line(item.question)}"]
        lines += [f"{label}. {one_line(text)}" for label, text in zip(item.labels, item.texts)]
        blocks.append("\n".join(lines))
    return QUESTIONS_OPEN + "\n" + "\n\n".join(blocks) + "\n" + QUESTIONS_CLOSE


def build_messages(personality_id: str, context: ContextLike | None, items: Sequence[ShuffledItem]) -> list[Message]:
    """Instruction and id, then the shared interview context, then the items.

    Raises:
        ValueError: blank personality_id or no items.
    """
    if not personality_id.strip():
        raise ValueError("personality_id must not be blank")
    if not items:
        raise ValueError("an answering prompt needs at least one item")
    system = SYSTEM_TEMPLATE.format(personality_id=personality_id)
    user = (
        render_context(context)
        + "\n\n"
        + f"Questions ({len(items)}):\n"
        + render_items(items)
        + "\n"
        + FINAL_TEMPLATE.format(n=len(items))
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def label_sets_of(items: Sequence[ShuffledItem]) -> list[tuple[str, ...]]:
    """The per-item label sets ``parse`` needs, from the items that were shown."""
    return [item.labels for item in items]


def parse(raw: str, label_sets: Sequence[Sequence[str]]) -> Result:
    """Exactly one ``Qi: LABEL`` line per item, in order; see the module docstring.

    Raises:
        ContractParseError: wrong line count, missing/repeated/out-of-order index, extra text,
            or a label not offered for its item.
        ValueError: no label sets (a caller error).
    """
    if not label_sets:
        raise ValueError("label_sets must list at least one item")
    if not isinstance(raw, str):
        fail(NAME, f"reply must be text, got {type(raw).__name__}", str(raw))
    n = len(label_sets)
    lines = raw.strip().splitlines()
    if len(lines) != n:
        fail(NAME, f"expected exactly {n} line(s) Q1..Q{n}, got {len(lines)}", raw)
    answers: list[str] = []
    for i, (line, labels) in enumerate(zip(lines, label_sets), start=1):
        m = _LINE.match(line.strip())
        if m is None:
            fail(NAME, f"line {i} must look like 'Q{i}: <label>', got {line.strip()[:40]!r}", raw)
        if m.group("idx") != str(i):
            fail(NAME, f"line {i} must answer Q{i}, got Q{m.group('idx')}", raw)
        label = m.group("label").strip()
        if label not in labels:
            fail(NAME, f"Q{i}: {label!r} is not one of the offered labels {list(labels)}", raw)
        answers.append(label)
    return Result(answers=tuple(answers))


def score_answer(chosen_label: str | None, item: ShuffledItem) -> tuple[str, int, float]:
    """(chosen kind, accuracy 0/1, reward) for one item, by the chosen option's retained role.

    ``chosen_label`` is None when the group's reply was invalid (kind ``"malformed"``); a label the
    item does not offer has kind ``"unavailable"``. Both score -0.5, like a near miss.
    """
    if chosen_label is None:
        return MALFORMED, 0, REWARD_OTHER
    kind = item.kind_of(chosen_label)
    if kind is None:
        return UNAVAILABLE, 0, REWARD_OTHER
    if kind == "correct":
        return kind, 1, REWARD_CORRECT
    if kind == "opposite_negation":
        return kind, 0, REWARD_OPPOSITE
    return kind, 0, REWARD_OTHER


# -- output shape (llm/constraints.py): a grammar where the server takes one (llama.cpp GBNF) ----
MAX_TOKENS = 600
"""Cap on a reply: one short line per question of an interview."""

OUTPUT_GRAMMAR = 'root ::= line ("\\n" line)*\nline ::= "Q" [1-9] [0-9]* ": " [A-D]\n'
"""``Q<number>: <label>`` lines as GBNF; the parser checks their count, order and offered labels."""
