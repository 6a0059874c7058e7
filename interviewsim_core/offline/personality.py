"""Offline PS: count high- and low-trait cue words over the whole collection.

A token matches a cue when it equals it, or, for cues of five letters or more, starts with it
(``organi`` matches ``organised``). High when high cues outnumber low ones by at least the
threshold (2, or one per 150 words for long collections), Low in the mirror case, else Neutral.
"""

from __future__ import annotations

import re

from ..contracts import personality as contract
from ._text import lines_after, tokens


CUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openness": (
        ("new", "curious", "curiosity", "ideas", "idea", "imagin", "artist", "arts", "explor", "experiment",
         "travel", "learn", "creativ", "novel", "different", "wonder", "change"),
        ("tradition", "routine", "familiar", "usual", "conventional", "practical", "same", "habit", "proven"),
    ),
    "conscientiousness": (
        ("plan", "plans", "planning", "organi", "disciplin", "careful", "duty", "responsib", "prepar",
         "schedule", "detail", "thorough", "hard", "commit", "rules", "order"),
        ("late", "forgot", "messy", "improvis", "spontaneous", "careless", "lazy", "whatever", "chaos"),
    ),
    "extraversion": (
        ("people", "friends", "party", "talk", "talking", "crowd", "social", "fun", "excit", "together",
         "team", "audience", "energy", "love", "meet"),
        ("alone", "quiet", "privat", "solitude", "shy", "reserved", "myself", "home", "silence", "withdraw"),
    ),
    "agreeableness": (
        ("thank", "grateful", "help", "kind", "respect", "trust", "appreciat", "support", "generous", "care",
         "share", "fair", "forgiv"),
        ("fight", "wrong", "stupid", "hate", "blame", "angry", "critici", "enemy", "argue", "refuse", "fool"),
    ),
    "neuroticism": (
        ("worr", "anxious", "afraid", "fear", "nervous", "stress", "upset", "sad", "depress", "scared",
         "panic", "doubt", "tense", "lonely"),
        ("calm", "relax", "confident", "steady", "peace", "secure", "fine", "easy", "comfortable", "content"),
    ),
}

_HEADER = re.compile(r"^Trait: (?P<trait>[a-z]+)\nResponses:\n", re.MULTILINE)



def _matches(token: str, cue: str) -> bool:
    return token == cue or (len(cue) >= 5 and token.startswith(cue))


def rate(trait: str, responses: list[str]) -> tuple[str, int, int, int]:
    """(level, high cue count, low cue count, word count) for one collection."""
    high_cues, low_cues = CUES[trait]
    words = [t for r in responses for t in tokens(r)]
    high = sum(1 for t in words if any(_matches(t, c) for c in high_cues))
    low = sum(1 for t in words if any(_matches(t, c) for c in low_cues))
    threshold = max(2, len(words) // 150)
    level = "High" if high - low >= threshold else "Low" if low - high >= threshold else "Neutral"
    return level, high, low, len(words)


def answer(prompt: str) -> str:
    m = _HEADER.search(prompt)
    trait = m.group("trait") if m and m.group("trait") in CUES else "openness"
    responses = lines_after(prompt, _HEADER, contract.RESPONSE_PREFIX)
    level, high, low, n = rate(trait, responses)
    return (
        f"<rate>{level}</rate> <justification>Offline lexicon baseline: {high} high-{trait} and {low} "
        f"low-{trait} cue words in {len(responses)} responses ({n} words).</justification>"
    )


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""
