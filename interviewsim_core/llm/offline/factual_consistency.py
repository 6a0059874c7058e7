"""Offline FC: lexical support, with a negation mismatch on shared content read as a contradiction.

For each (answer sentence, summary sentence) pair sharing at least two content words, a negation on
exactly one side is a Contradiction. Otherwise the share of the answer's content words found in
the summary decides: at least half is Entailment, less is Neutral.
"""

from __future__ import annotations

import json

from ...contracts import factual_consistency as contract
from ._text import content_tokens, is_negated, read_block, sentences

MARKER = contract.MARKER
MIN_SHARED = 2
ENTAILMENT_COVERAGE = 0.5


def detects(prompt: str) -> bool:
    return MARKER in prompt


def judge(summary: str, generated: str) -> tuple[str, str]:
    """(label, explanation) for one answer against one summary."""
    summary_sents = [(s, content_tokens(s), is_negated(s)) for s in sentences(summary)]
    for a in sentences(generated):
        a_tokens, a_neg = content_tokens(a), is_negated(a)
        for s, s_tokens, s_neg in summary_sents:
            shared = a_tokens & s_tokens
            if len(shared) >= MIN_SHARED and a_neg != s_neg:
                return "Contradiction", (
                    f"Offline lexical baseline: an answer sentence and a summary sentence share "
                    f"{sorted(shared)[:5]} but only one of them is negated."
                )
    answer_tokens = content_tokens(generated)
    summary_tokens = content_tokens(summary)
    coverage = len(answer_tokens & summary_tokens) / len(answer_tokens) if answer_tokens else 0.0
    label = "Entailment" if coverage >= ENTAILMENT_COVERAGE else "Neutral"
    return label, (
        f"Offline lexical baseline: {coverage:.0%} of the answer's content words appear in the fact "
        f"summary and no negation conflict was found."
    )


def answer(prompt: str) -> str:
    label, explanation = judge(read_block(prompt, "fact_summary") or "", read_block(prompt, "generated_answer") or "")
    return json.dumps({"label": label, "explanation": explanation})
