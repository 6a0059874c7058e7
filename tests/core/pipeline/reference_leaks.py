"""The leak detector as it was before issue 13, kept as the reference the fast one must agree with.

It matched every fragment against every prompt with ``in`` (time ~ prompt size x fragments) and
normalised with ``" ".join(text.split())``: obviously right, too slow for Chrono-1000 prompts.
``test_leaks_equivalence.py`` checks ``interviewsim_core.pipeline.leaks`` reports exactly what this
one does. Not part of the package: nothing but tests imports it.

Original module docstring:

Detecting held-out text in a prompt that must never see it.

The chronological hold-out is only meaningful if nothing derived from held-out responses reaches a
generator: not the responses, not the fact summary built from them. This module finds such text
verbatim in a prompt. Tests use it over every method and seed, and the Dagster layer runs it as an
asset check on stored prompts.

A sentence counts as a leak only when it is long enough to be specific (``MIN_WORDS``) and does
not also occur in material the generator may legitimately see (training pairs, profiles, held-out
*questions*): real interviews repeat boilerplate, and a sentence said in a training interview too
is not evidence of a leak.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from interviewsim_core.llm.types import Message
from interviewsim_core.split import HeldOutSplit

MIN_WORDS = 8
"""Shorter sentences ("Thank you, Mr. President.") are too common to prove anything."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def normalise(text: str) -> str:
    """Whitespace runs collapsed to one space and trimmed: prompts re-flow text onto one line."""
    return " ".join(text.split())


def sentences(text: str, min_words: int = MIN_WORDS) -> list[str]:
    """The sentences of ``text`` (normalised) with at least ``min_words`` words."""
    out = []
    for s in _SENTENCE_END.split(normalise(text)):
        s = s.strip()
        if len(s.split()) >= min_words:
            out.append(s)
    return out


class LeakDetector:
    """Held-out fragments of one personality, prepared once and matched against many prompts."""

    def __init__(self, split: HeldOutSplit, fact_summaries: Iterable[str] = (), min_words: int = MIN_WORDS):
        allowed_parts = [split.doc.personality.profile, split.doc.personality.long_profile]
        for p in split.train_pairs:
            allowed_parts += [p.question, p.response]
        allowed_parts += [p.question for p in split.test_pairs]
        allowed = "\n".join(normalise(t) for t in allowed_parts)

        fragments: list[str] = []
        for p in split.test_pairs:
            whole = normalise(p.response)
            if len(whole.split()) >= min_words:
                fragments.append(whole)
            fragments.extend(sentences(p.response, min_words))
        for summary in fact_summaries:
            if summary:
                fragments.extend(sentences(summary, min_words))
        seen: set[str] = set()
        # Longest first so a whole leaked response is reported as itself, not only as its sentences.
        self.fragments: tuple[str, ...] = tuple(
            f for f in sorted(fragments, key=len, reverse=True)
            if not (f in seen or seen.add(f)) and f not in allowed
        )

    def find(self, messages: Sequence[Message] | str, exempt: Iterable[str] = ()) -> list[str]:
        """Held-out fragments present in ``messages``.

        Args:
            messages: a prompt (chat messages) or its text.
            exempt: texts the prompt is meant to contain although they derive from held-out
                responses (the MCQ items being asked); they are removed before matching so only
                the context part of an answering prompt is checked.
        """
        text = messages if isinstance(messages, str) else "\n".join(m["content"] for m in messages)
        text = normalise(text)
        for e in sorted((normalise(x) for x in exempt if x and x.strip()), key=len, reverse=True):
            text = text.replace(e, "\u241e")
        return [f for f in self.fragments if f in text]


def heldout_leaks(
    split: HeldOutSplit,
    messages: Sequence[Message] | str,
    fact_summaries: Iterable[str] = (),
    exempt: Iterable[str] = (),
) -> list[str]:
    """Held-out response texts and fact-summary sentences found verbatim in a prompt (empty = clean).

    Build a ``LeakDetector`` instead when checking many prompts of one personality.
    """
    return LeakDetector(split, fact_summaries).find(messages, exempt)
