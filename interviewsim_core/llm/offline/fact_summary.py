"""Offline fact summary: extractive, the first sentence of each response, de-duplicated, capped."""

from __future__ import annotations

import json
import re

from ...contracts import fact_summary as contract
from ._text import first_sentence, lines_after

MARKER = contract.MARKER
MAX_SENTENCES = 12

_HEADER = re.compile(r"^Personality ID: .*\nResponses \(\d+\):\n", re.MULTILINE)


def detects(prompt: str) -> bool:
    return MARKER in prompt


def answer(prompt: str) -> str:
    responses = lines_after(prompt, _HEADER, contract.RESPONSE_PREFIX)
    kept: list[str] = []
    seen: set[str] = set()
    for r in responses:
        s = first_sentence(r)
        if s and s.casefold() not in seen:
            seen.add(s.casefold())
            kept.append(s)
        if len(kept) == MAX_SENTENCES:
            break
    summary = " ".join(kept) or "The responses state no extractable fact."
    explanation = (
        f"Offline extractive baseline: the first sentence of each of {len(responses)} responses, "
        f"{len(kept)} kept after de-duplication (cap {MAX_SENTENCES})."
    )
    return json.dumps({"summary": summary, "explanation": explanation})
