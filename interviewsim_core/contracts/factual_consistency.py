"""Factual Consistency (FC): is a generated answer supported by, silent on, or against the facts?

The judge reads one prepared fact summary and one generated answer and returns exactly one of three
case-sensitive labels. The contradiction ratio (Contradiction judgments / all FC judgments) is the
metric; the explanation is kept for inspection. No synonym or recased label is accepted.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_placeholder
from ._json import load_object, require_choice, require_keys, require_text

NAME = "factual_consistency"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: placeholders and echoes of the instructions are invalid (issue 22)

MARKER = "## InterviewSim task: factual consistency judgment"

LABELS = ("Entailment", "Neutral", "Contradiction")
Label = Literal["Entailment", "Neutral", "Contradiction"]

EXPLANATION_PLACEHOLDER = "<justification from the fact summary>"
LABEL_PLACEHOLDER = " | ".join(f'"{label}"' for label in LABELS)
PLACEHOLDERS = (EXPLANATION_PLACEHOLDER,)
"""The explanation's placeholder: the template is built from it and the parser refuses it as content
(the label's placeholder, the list of labels, is already refused as not one label)."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You check a generated interview answer against a fact summary about the person. Use only the "
    "fact summary as evidence; do not use outside knowledge.\n\n"
    "Choose exactly one label, written exactly as shown:\n"
    "- Entailment: the evidence supports the claim(s) of the answer;\n"
    "- Neutral: the evidence neither supports nor conflicts with the answer;\n"
    "- Contradiction: the evidence conflicts with the answer.\n\n"
    "Reply with exactly one JSON object and nothing else, in this shape:\n"
    '{"label": ' + LABEL_PLACEHOLDER + ', "explanation": "' + EXPLANATION_PLACEHOLDER + '"}\n'
    "No other fields."
)

USER_TEMPLATE = (
    "Fact summary:\n<fact_summary>\n{summary}\n</fact_summary>\n\n"
    "Generated answer:\n<generated_answer>\n{answer}\n</generated_answer>"
)

INSTRUCTIONS = Instructions(SYSTEM_TEMPLATE, *format_literals(USER_TEMPLATE))
"""The contract's own wording, for the echo rule (``_guards``); the summary and the answer are data."""


class Result(BaseModel):
    """One FC judgment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: Label
    explanation: str


def build_messages(summary: str, answer: str) -> list[Message]:
    """Instructions, then the summary (shared by a personality's answers), then the answer.

    Raises:
        ValueError: a blank summary or answer.
    """
    if not summary.strip() or not answer.strip():
        raise ValueError("summary and answer must both be non-blank")
    user = USER_TEMPLATE.format(summary=summary.strip(), answer=answer.strip())
    return [Message(role="system", content=SYSTEM_TEMPLATE), Message(role="user", content=user)]


def parse(raw: str) -> Result:
    """Exactly ``{"label": one of LABELS, "explanation": non-blank}``, optionally fenced.

    Raises:
        ContractParseError: any other label (recased, synonym, padded), shape or type, an
            explanation that is the template's placeholder, an echo of the instructions.
    """
    obj = load_object(raw, NAME, INSTRUCTIONS)
    require_keys(obj, ("label", "explanation"), NAME, raw)
    label = require_choice(obj["label"], "label", LABELS, NAME, raw)
    explanation = reject_placeholder(require_text(obj["explanation"], "explanation", NAME, raw), "explanation",
                                     PLACEHOLDERS, NAME, raw)
    return Result(label=label, explanation=explanation)  # type: ignore[arg-type]


# -- output shape (llm/constraints.py): sent as a constraint where the model supports one --------
MAX_TOKENS = 320
"""Cap on a reply: a label and a few sentences of justification."""


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
