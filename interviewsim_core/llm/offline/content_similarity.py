"""Offline CS: Jaccard overlap of content words between reference and candidate, binned to 1..5."""

from __future__ import annotations

import json

from ...contracts import content_similarity as contract
from ._text import content_tokens, jaccard, read_block

MARKER = contract.MARKER

# Lower bounds of scores 5, 4, 3, 2 on the Jaccard overlap; below the last bound scores 1.
BINS = ((0.6, 5), (0.4, 4), (0.25, 3), (0.1, 2))


def detects(prompt: str) -> bool:
    return MARKER in prompt


def score_for(overlap: float) -> int:
    return next((s for bound, s in BINS if overlap >= bound), 1)


def answer(prompt: str) -> str:
    ref = content_tokens(read_block(prompt, "reference") or "")
    cand = content_tokens(read_block(prompt, "candidate") or "")
    overlap = jaccard(ref, cand)
    score = score_for(overlap)
    explanation = (
        f"Offline lexical baseline: {len(ref & cand)} shared content words, Jaccard overlap "
        f"{overlap:.2f}, binned to score {score}. Not a semantic judgment."
    )
    return json.dumps({"score": score, "explanation": explanation})
