"""Offline generation: reuse the person's own words from the prompt's context.

With training examples, answer with the response of the example whose question shares the most
content words with the new question (Jaccard; ties go to the later example, the more recent in a
chronological context). With only a profile, the profile sentence that best overlaps the
question. With no context, a fixed plain sentence.

Part of the offline smoke-test baseline: it shows the pipeline runs end to end, not how well a
person can be simulated.
"""

from __future__ import annotations

import re

from ..contracts import generation as contract
from ._text import content_tokens, first_sentence, jaccard, sentences


# Free of every PS lexicon cue: the fallback is repeated for every question of a no-context run, so a
# cue word in it (this once said "fair") would rate the whole collection on that trait.
FALLBACK = "I would have to think about that before I answer it properly."
TERSE_FALLBACK = "I could not say that in a sentence."
"""``offline/terse``'s own no-context answer (also cue-free): two generators never give one text by rule."""

_PROFILE = re.compile(
    rf"^{re.escape(contract.PROFILE_HEADING)}\n(.*?)\n\n(?:{re.escape(contract.EXAMPLES_HEADING)}|{re.escape(contract.NEW_QUESTION)})",
    re.MULTILINE | re.DOTALL,
)



def _new_question(prompt: str) -> str:
    found = [line[len(contract.NEW_QUESTION) :] for line in prompt.splitlines() if line.startswith(contract.NEW_QUESTION)]
    return found[-1] if found else ""


def _examples(prompt: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    pending: str | None = None
    for line in prompt.splitlines():
        if line.startswith(contract.EXAMPLE_QUESTION):
            pending = line[len(contract.EXAMPLE_QUESTION) :]
        elif line.startswith(contract.EXAMPLE_RESPONSE) and pending is not None:
            pairs.append((pending, line[len(contract.EXAMPLE_RESPONSE) :]))
            pending = None
    return pairs


def answer(prompt: str) -> str:
    question = content_tokens(_new_question(prompt))
    examples = [(q, r) for q, r in _examples(prompt) if r.strip()]
    if examples:
        best_score, best = -1.0, examples[0][1]
        for q, r in examples:
            score = jaccard(question, content_tokens(q))
            if score >= best_score:
                best_score, best = score, r
        return best.strip()
    m = _PROFILE.search(prompt)
    if m:
        candidates = sentences(m.group(1))
        if candidates:
            return max(candidates, key=lambda s: jaccard(question, content_tokens(s)))  # first max wins
    return FALLBACK


def answer_terse(prompt: str) -> str:
    """The ``offline/terse`` generator: the first sentence of ``answer``'s reply.

    A second offline simulator that differs from the first in a way the metrics can see (fewer of the
    person's facts, so a lower content similarity, and fewer claims to contradict), so a study of two
    offline generators (``make demo``) has a real difference for its generator table and paired tests."""
    full = answer(prompt)
    return TERSE_FALLBACK if full == FALLBACK else first_sentence(full) or full


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""

VARIANTS = {"terse": {contract.NAME: answer_terse}}
"""Offline model name -> the contracts it answers differently from ``offline/extractive`` (the rest as it does)."""
