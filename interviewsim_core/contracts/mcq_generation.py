"""MCQ generation: one multiple-choice item from one atomic question and answer, then a shuffle.

The builder returns the options in the paper's role order, correct answer first:
``correct, opposite_negation, near_miss`` (3 options) plus ``plausible_misconception`` (4).
The parser holds it to that: exactly the fields ``question``, ``options``, ``correct_answer``
(key order inside objects is not significant; option *array* order is), each option exactly
``{"kind", "text"}`` with the kinds in that order, ``"correct_answer": "A"``, the question equal
to the atomic question and the first option's text equal to the atomic answer.

Equality and uniqueness rules (decided here):
- question / first option vs the atomic inputs: equal after collapsing whitespace runs and
  stripping; case-sensitive (a recased answer is a different string a reader may notice);
- option texts must be unique after stripping, collapsing whitespace and case-folding: two
  options that differ only in case or spacing are the same choice to a reader.

``shuffle_item`` then fixes the presentation order from sha256 of a seed string (never Python's
salted ``hash()``), so a re-run or another machine shows the same labels, and keeps every
option's role and the answer key: scoring follows the role, not the position.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import fail, load_object, require_choice, require_keys, require_text
from .generation import one_line

NAME = "mcq_generation"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: placeholders and echoes of the instructions are invalid (issue 22)

MARKER = "## InterviewSim task: multiple-choice item construction"

OptionKind = Literal["correct", "opposite_negation", "near_miss", "plausible_misconception"]
KINDS_BY_COUNT: dict[int, tuple[str, ...]] = {
    3: ("correct", "opposite_negation", "near_miss"),
    4: ("correct", "opposite_negation", "near_miss", "plausible_misconception"),
}
LABELS_BY_COUNT: dict[int, tuple[str, ...]] = {3: ("A", "B", "C"), 4: ("A", "B", "C", "D")}

KIND_DESCRIPTIONS = {
    "correct": "the atomic answer, copied exactly",
    "opposite_negation": "states the opposite of the correct answer, or negates it",
    "near_miss": "close to the correct answer but wrong in one specific detail",
    "plausible_misconception": "a plausible belief someone might hold without having read the response, but wrong",
}

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You write one multiple-choice question from an atomic question and its correct answer.\n"
    "Give exactly {n} options, in exactly this order of roles:\n{roles}\n"
    "Every option text must be different. The question must be the atomic question, unchanged, and "
    "the first option must be the atomic answer, unchanged. The correct answer is always A before "
    "shuffling.\n\n"
    "Reply with exactly one JSON object and nothing else, in this shape:\n{shape}"
)

USER_TEMPLATE = (
    "Number of options: {n}\n"
    "Atomic question:\n<atomic_question>\n{question}\n</atomic_question>\n\n"
    "Atomic answer:\n<atomic_answer>\n{answer}\n</atomic_answer>"
)


class Option(BaseModel):
    """One option with its pre-shuffle semantic role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: OptionKind
    text: str


class Result(BaseModel):
    """The item as generated, options in role order; ``correct_answer`` is always "A"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    options: tuple[Option, ...]
    correct_answer: Literal["A"] = "A"


class ShuffledItem(BaseModel):
    """An item in presentation order: ``labels[i]`` shows ``texts[i]``, whose role is ``kinds[i]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    labels: tuple[str, ...]
    texts: tuple[str, ...]
    kinds: tuple[OptionKind, ...]
    correct_label: str

    @model_validator(mode="after")
    def _consistent(self) -> "ShuffledItem":
        n = len(self.labels)
        if n not in LABELS_BY_COUNT or self.labels != LABELS_BY_COUNT[n]:
            raise ValueError(f"labels must be A-C or A-D, got {self.labels}")
        if len(self.texts) != n or len(self.kinds) != n:
            raise ValueError("labels, texts and kinds must have the same length")
        if sorted(self.kinds) != sorted(KINDS_BY_COUNT[n]):
            raise ValueError(f"kinds must be a permutation of {KINDS_BY_COUNT[n]}, got {self.kinds}")
        if self.kind_of(self.correct_label) != "correct":
            raise ValueError("correct_label must point at the option whose kind is 'correct'")
        return self

    def kind_of(self, label: str) -> str | None:
        """The role behind a label, or None when the label is not offered for this item."""
        try:
            return self.kinds[self.labels.index(label)]
        except ValueError:
            return None


QUESTION_PLACEHOLDER = "<the atomic question>"
OPTION_PLACEHOLDERS = {k: f"<{k} option>" for k in KINDS_BY_COUNT[4]}
PLACEHOLDERS = (QUESTION_PLACEHOLDER, *OPTION_PLACEHOLDERS.values())
"""The reply shape's placeholders (``_shape`` builds the template from them; the parser refuses them)."""

INSTRUCTIONS = Instructions(
    *format_literals(SYSTEM_TEMPLATE), *format_literals(USER_TEMPLATE), *KIND_DESCRIPTIONS.values()
)
"""The contract's own wording, for the echo rule (``_guards``); the atomic question and answer are data."""


def _check_count(n_options: int) -> None:
    if n_options not in KINDS_BY_COUNT:
        raise ValueError(f"n_options must be 3 or 4, got {n_options!r}")


def _shape(n: int) -> str:
    opts = ",\n".join(f'    {{"kind": "{k}", "text": "{OPTION_PLACEHOLDERS[k]}"}}' for k in KINDS_BY_COUNT[n])
    return '{\n  "question": "' + QUESTION_PLACEHOLDER + '",\n  "options": [\n' + opts + '\n  ],\n  "correct_answer": "A"\n}'


def build_messages(atomic_question: str, atomic_answer: str, n_options: int) -> list[Message]:
    """Instructions for the option count, then the atomic question and answer.

    Raises:
        ValueError: n_options not 3/4, or blank inputs.
    """
    _check_count(n_options)
    if not atomic_question.strip() or not atomic_answer.strip():
        raise ValueError("atomic question and answer must both be non-blank")
    roles = "\n".join(f"{i + 1}. {k}: {KIND_DESCRIPTIONS[k]}" for i, k in enumerate(KINDS_BY_COUNT[n_options]))
    system = SYSTEM_TEMPLATE.format(n=n_options, roles=roles, shape=_shape(n_options))
    user = USER_TEMPLATE.format(n=n_options, question=atomic_question.strip(), answer=atomic_answer.strip())
    return [Message(role="system", content=system), Message(role="user", content=user)]


def option_key(text: str) -> str:
    """The form under which two option texts count as the same choice (see module docstring)."""
    return one_line(text).casefold()


def parse(raw: str, atomic_question: str, atomic_answer: str, n_options: int) -> Result:
    """The generated item, checked against the atomic inputs and the option count.

    Raises:
        ContractParseError: any breach of the shape, order, key, equality or uniqueness rules, a
            question or option that is a placeholder of the template, an echo of the instructions.
        ValueError: n_options is not 3 or 4 (a caller error, not a model error).
    """
    _check_count(n_options)
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("question", "options", "correct_answer"), NAME, raw)
    question = reject_placeholder(require_text(obj["question"], "question", NAME, raw), "question",
                                  PLACEHOLDERS, NAME, raw)
    if one_line(question) != one_line(atomic_question):
        fail(NAME, "question must equal the atomic question", raw)
    require_choice(obj["correct_answer"], "correct_answer", ("A",), NAME, raw)
    raw_options: Any = obj["options"]
    if not isinstance(raw_options, list):
        fail(NAME, f"options must be an array, got {type(raw_options).__name__}", raw)
    kinds = KINDS_BY_COUNT[n_options]
    if len(raw_options) != n_options:
        fail(NAME, f"options must have exactly {n_options} entries, got {len(raw_options)}", raw)
    options: list[Option] = []
    for i, (item, kind) in enumerate(zip(raw_options, kinds)):
        where = f"options[{i}]"
        if not isinstance(item, dict):
            fail(NAME, f"{where} must be an object, got {type(item).__name__}", raw)
        require_keys(item, ("kind", "text"), NAME, raw, where=where)
        require_choice(item["kind"], f"{where}.kind", (kind,), NAME, raw)
        text = reject_placeholder(require_text(item["text"], f"{where}.text", NAME, raw), f"{where}.text",
                                  PLACEHOLDERS, NAME, raw)
        options.append(Option(kind=kind, text=text))  # type: ignore[arg-type]
    if one_line(options[0].text) != one_line(atomic_answer):
        fail(NAME, "the first (correct) option must equal the atomic answer", raw)
    seen = [option_key(o.text) for o in options]
    if len(set(seen)) != len(seen):
        fail(NAME, "option texts must be unique (compared ignoring case and spacing)", raw)
    return Result(question=question, options=tuple(options), correct_answer="A")


def permutation(seed_key: str, n: int) -> tuple[int, ...]:
    """A reproducible order of ``range(n)``: indices sorted by sha256(seed_key, index).

    Pure hashing, so it is the same in every process, Python version and machine.
    """
    return tuple(sorted(range(n), key=lambda i: hashlib.sha256(f"{seed_key}\x1f{i}".encode()).digest()))


def shuffle_item(result: Result, seed_key: str) -> ShuffledItem:
    """Present the options in a seeded order, keeping each option's role and the answer key.

    Args:
        result: a parsed item (options in role order).
        seed_key: e.g. ``f"{run_seed}:{item_id}"``; same key, same order.
    """
    n = len(result.options)
    order = permutation(seed_key, n)
    shuffled = [result.options[i] for i in order]
    labels = LABELS_BY_COUNT[n]
    correct_label = labels[next(j for j, o in enumerate(shuffled) if o.kind == "correct")]
    return ShuffledItem(
        question=result.question,
        labels=labels,
        texts=tuple(o.text for o in shuffled),
        kinds=tuple(o.kind for o in shuffled),
        correct_label=correct_label,
    )


# -- output shape (llm/constraints.py): sent as a constraint where the model supports one --------
MAX_TOKENS = 600
"""Cap on a reply: a question and three or four short options."""


def output_schema() -> dict:
    """The JSON schema of ``Result`` (3 or 4 options; the parser checks the count and order asked)."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    schema = strict_json_schema(Result)
    schema["properties"]["options"].update(minItems=min(KINDS_BY_COUNT), maxItems=max(KINDS_BY_COUNT))
    return schema
