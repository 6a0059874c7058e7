"""Offline CS: cosine overlap of stemmed content words between reference and candidate, binned 1..5.

A smoke-test baseline, not a judge of quality: it measures shared vocabulary, not meaning. The
bins were calibrated on the shipped sample corpus so that scores spread over the whole 1..5 range
on real pairs of different texts (two different answers rarely share more than a few content
words), while identical texts score 5 and texts with nothing in common score 1. A candidate that
echoes the person's own relevant answers therefore tends to score above a generic one, which is
the ordering a weak-but-sane judge should produce.
"""

from __future__ import annotations

import json

from ..contracts import content_similarity as contract
from ._text import content_stems, cosine, read_block


# Lower bounds of scores 5, 4, 3, 2 on the cosine overlap; below the last bound scores 1.
# On the sample corpus's generated-vs-reference pairs these put roughly 45/30/20/8/1 % of the
# pairs in scores 1..5.
BINS = ((0.3, 5), (0.18, 4), (0.1, 3), (0.04, 2))



def score_for(overlap: float) -> int:
    return next((s for bound, s in BINS if overlap >= bound), 1)


def answer(prompt: str) -> str:
    ref = content_stems(read_block(prompt, "reference") or "")
    cand = content_stems(read_block(prompt, "candidate") or "")
    overlap = cosine(ref, cand)
    score = score_for(overlap)
    explanation = (
        f"Offline lexical baseline: {len(ref & cand)} shared content-word stems, cosine overlap "
        f"{overlap:.2f}, binned to score {score}. Not a semantic judgment."
    )
    return json.dumps({"score": score, "explanation": explanation})


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""
