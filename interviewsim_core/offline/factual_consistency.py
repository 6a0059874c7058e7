"""Offline FC: lexical support, with a negated near-paraphrase read as a contradiction.

Part of the offline smoke-test baseline, not a judge of quality. An answer sentence contradicts a
summary sentence only when the two are close paraphrases (at least ``MIN_SHARED`` shared
content-word stems, covering at least ``PARAPHRASE_COVERAGE`` of the shorter sentence) and exactly
one of them is negated. Merely sharing two words is not enough: a grounded answer, which talks
about the same people and things as the summary, would otherwise be called contradictory whenever
some unrelated clause of it carries a "no" (``"Fourteen lorries, no contract"`` against
``"Fourteen lorries."``), penalising exactly the answers that stay on the person's facts.
Otherwise the share of the answer's stems found in the summary decides: at least half (and at
least ``MIN_ENTAILED`` stems, so a generic two-word sentence is not "supported" by chance) is
Entailment, less is Neutral.
"""

from __future__ import annotations

import json

from ..contracts import factual_consistency as contract
from ._text import content_stems, is_negated, read_block, sentences

MIN_SHARED = 2
PARAPHRASE_COVERAGE = 0.5
ENTAILMENT_COVERAGE = 0.5
MIN_ENTAILED = 3



def _paraphrase(a: set[str], b: set[str]) -> set[str] | None:
    shared = a & b
    if len(shared) >= MIN_SHARED and len(shared) >= PARAPHRASE_COVERAGE * min(len(a), len(b)):
        return shared
    return None


def judge(summary: str, generated: str) -> tuple[str, str]:
    """(label, explanation) for one answer against one summary."""
    summary_sents = [(content_stems(s), is_negated(s)) for s in sentences(summary)]
    for a in sentences(generated):
        a_stems, a_neg = content_stems(a), is_negated(a)
        for s_stems, s_neg in summary_sents:
            shared = _paraphrase(a_stems, s_stems)
            if shared is not None and a_neg != s_neg:
                return "Contradiction", (
                    f"Offline lexical baseline: an answer sentence and a summary sentence say nearly the "
                    f"same thing ({sorted(shared)[:5]}) but only one of them is negated."
                )
    answer_stems = content_stems(generated)
    summary_stems = content_stems(summary)
    coverage = len(answer_stems & summary_stems) / len(answer_stems) if answer_stems else 0.0
    entailed = len(answer_stems & summary_stems)
    label = "Entailment" if coverage >= ENTAILMENT_COVERAGE and entailed >= MIN_ENTAILED else "Neutral"
    return label, (
        f"Offline lexical baseline: {coverage:.0%} of the answer's content words appear in the fact "
        f"summary and no negation conflict was found."
    )


def answer(prompt: str) -> str:
    label, explanation = judge(read_block(prompt, "fact_summary") or "", read_block(prompt, "generated_answer") or "")
    return json.dumps({"label": label, "explanation": explanation})


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""
