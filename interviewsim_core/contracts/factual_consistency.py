"""Factual Consistency (FC): is a generated answer supported by, silent on, or against the facts?

The judge reads one prepared fact summary and one generated answer and returns exactly one of three
case-sensitive labels. The contradiction ratio (Contradiction judgments / all FC judgments) is the
metric; the explanation is kept for inspection. No synonym or recased label is accepted.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._json import load_object, require_choice, require_keys, require_text

NAME = "factual_consistency"
CONTRACT_VERSION = "1"
PARSER_VERSION = "1"

MARKER = "## InterviewSim task: factual consistency judgment"

LABELS = ("Entailment", "Neutral", "Contradiction")
Label = Literal["Entailment", "Neutral", "Contradiction"]

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You check a generated interview answer against a fact summary about the person. Use only the "
    "fact summary as evidence; do not use outside knowledge.\n\n"
    "Choose exactly one label, written exactly as shown:\n"
    "- Entailment: the evidence supports the claim(s) of the answer;\n"
    "- Neutral: the evidence neither supports nor conflicts with the answer;\n"
    "- Contradiction: the evidence conflicts with the answer.\n\n"
    "Reply with exactly one JSON object and nothing else, in this shape:\n"
    '{"label": "Entailment" | "Neutral" | "Contradiction", "explanation": "<justification from the fact summary>"}\n'
    "No other fields."
)

USER_TEMPLATE = (
    "Fact summary:\n<fact_summary>\n{summary}\n</fact_summary>\n\n"
    "Generated answer:\n<generated_answer>\n{answer}\n</generated_answer>"
)


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
        ContractParseError: any other label (recased, synonym, padded), shape or type.
    """
    obj = load_object(raw, NAME)
    require_keys(obj, ("label", "explanation"), NAME, raw)
    label = require_choice(obj["label"], "label", LABELS, NAME, raw)
    return Result(label=label, explanation=require_text(obj["explanation"], "explanation", NAME, raw))  # type: ignore[arg-type]


# -- output shape (llm/constraints.py): sent as a constraint where the model supports one --------
MAX_TOKENS = 320
"""Cap on a reply: a label and a few sentences of justification."""


def output_schema() -> dict:
    """The JSON schema of ``Result``, in the subset strict constrained decoding accepts."""
    from ..llm.constraints import strict_json_schema  # noqa: PLC0415

    return strict_json_schema(Result)
