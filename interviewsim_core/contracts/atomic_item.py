"""Atomic item: turn one held-out question/response pair into one short, checkable fact.

The item tests one explicit claim of the response, has one short exact answer, needs no outside
knowledge and adds no information. It feeds MCQ generation, whose first option must equal the
atomic answer, so the answer is kept to one line.

Reply format: exactly two lines, in this order, labels case-sensitive::

    Atomic Question: <non-blank>
    Atomic Answer: <non-blank>

Whitespace around the whole reply and around each value is ignored; blank lines, a third line,
a fence, or the lines swapped are breaches.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_echo, reject_placeholder
from ._json import fail

NAME = "atomic_item"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: placeholders and echoes of the instructions are invalid (issue 22)

MARKER = "## InterviewSim task: atomic fact item"

QUESTION_LABEL = "Atomic Question:"
ANSWER_LABEL = "Atomic Answer:"
QUESTION_PLACEHOLDER = "<one question about the claim>"
ANSWER_PLACEHOLDER = "<the short exact answer>"
PLACEHOLDERS = (QUESTION_PLACEHOLDER, ANSWER_PLACEHOLDER)
"""The reply lines' placeholders: the template is built from them and the parser refuses them as content."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You turn one interview question and the person's response into one atomic fact item.\n"
    "The item must:\n"
    "- test exactly one claim the response states explicitly;\n"
    "- have one short, exact answer taken from the response;\n"
    "- be answerable from the response alone, with no outside knowledge;\n"
    "- add no information that the response does not contain.\n\n"
    "Reply with exactly these two lines and nothing else:\n"
    f"{QUESTION_LABEL} {QUESTION_PLACEHOLDER}\n"
    f"{ANSWER_LABEL} {ANSWER_PLACEHOLDER}"
)

USER_TEMPLATE = "Interview question:\n<question>\n{question}\n</question>\n\nResponse:\n<response>\n{response}\n</response>"

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_TEMPLATE))
"""The contract's own wording, for the echo rule (``_guards``); the question and response are data."""


class Result(BaseModel):
    """One atomic question and its exact answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    answer: str


def build_messages(question: str, response: str) -> list[Message]:
    """Instructions, then the pair.

    Raises:
        ValueError: a blank question or response.
    """
    if not question.strip() or not response.strip():
        raise ValueError("question and response must both be non-blank")
    user = USER_TEMPLATE.format(question=question.strip(), response=response.strip())
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content=user)]


def parse(raw: str) -> Result:
    """The two labelled lines, see the module docstring.

    Raises:
        ContractParseError: an echo of the instructions, wrong line count, wrong or missing labels,
            blank values, a value that is the template's placeholder.
    """
    if not isinstance(raw, str):
        fail(NAME, f"reply must be text, got {type(raw).__name__}", str(raw))
    lines = raw.strip().splitlines()
    if len(lines) != 2:
        reject_echo(NAME, [raw], raw, INSTRUCTIONS)  # a copied prompt is that, not only "too many lines"
        labelled = [f"line {i} starts with {lab!r}" for i, line in enumerate(lines, start=1)
                    for lab in (QUESTION_LABEL, ANSWER_LABEL) if line.strip().startswith(lab)]
        seen = f" ({'; '.join(labelled)})" if labelled else " (no line starts with either label)"
        fail(NAME, f"reply must be exactly 2 lines ({QUESTION_LABEL} / {ANSWER_LABEL}), got {len(lines)}{seen}", raw)
    values = []
    for line, label in zip(lines, (QUESTION_LABEL, ANSWER_LABEL)):
        line = line.strip()
        if not line.startswith(label):
            fail(NAME, f"expected a line starting with {label!r}, got {line[:40]!r}", raw)
        value = line[len(label) :].strip()
        if not value:
            fail(NAME, f"{label} value must not be blank", raw)
        values.append(reject_placeholder(value, label.rstrip(":").lower(), PLACEHOLDERS, NAME, raw))
    reject_echo(NAME, values, raw, INSTRUCTIONS)
    return Result(question=values[0], answer=values[1])


# -- output shape (llm/constraints.py): a grammar where the server takes one (llama.cpp GBNF) ----
MAX_TOKENS = 200
"""Cap on a reply: one question and one short answer."""

OUTPUT_GRAMMAR = (
    f'root ::= "{QUESTION_LABEL} " value "\\n{ANSWER_LABEL} " value\n'
    'value ::= [^ \\n] [^\\n]*\n'
)
"""The two labelled lines as GBNF (what ``parse`` accepts)."""
