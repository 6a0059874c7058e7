"""Offline MCQ generation: distractors by rule, always satisfying the parser.

opposite_negation drops or inserts a negation; near_miss changes the first number (or appends a
qualifying detail); plausible_misconception says the topic never came up. Texts are made unique
under the contract's own comparison by suffixing a variant number when two would collide.
"""

from __future__ import annotations

import json
import re

from ...contracts import mcq_generation as contract
from ._text import NEGATIONS, read_block

MARKER = contract.MARKER

AUXILIARIES = frozenset(
    "is was are were am do does did can could will would has have had should must".split()
)
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven")
_COUNT = re.compile(r"^Number of options: ([34])$", re.MULTILINE)
_DIGITS = re.compile(r"\d+")


def detects(prompt: str) -> bool:
    return MARKER in prompt


def negate(text: str) -> str:
    """The statement's negation (or, when already negative, its affirmation)."""
    words = text.split()
    for i, w in enumerate(words):
        bare = w.lower().strip(".,;:!?")
        if bare in NEGATIONS:
            rest = words[:i] + words[i + 1 :]
            if rest:
                return " ".join(rest)
        if bare.endswith("n't"):
            base = {"can't": "can", "won't": "will"}.get(bare, bare[:-3])
            return " ".join(words[:i] + [base] + words[i + 1 :])
    for i, w in enumerate(words):
        if w.lower() in AUXILIARIES:
            return " ".join(words[: i + 1] + ["not"] + words[i + 1 :])
    return "Not " + (text[:1].lower() + text[1:])


def near_miss(text: str) -> str:
    """The same statement with one detail changed: the first number moved by one."""
    m = _DIGITS.search(text)
    if m:
        return text[: m.start()] + str(int(m.group()) + 1) + text[m.end() :]
    words = text.split()
    for i, w in enumerate(words):
        bare = w.lower().strip(".,;:!?")
        if bare in NUMBER_WORDS[:-1]:
            words[i] = w.lower().replace(bare, NUMBER_WORDS[NUMBER_WORDS.index(bare) + 1])
            return " ".join(words)
    return f"{text.rstrip('.')}, but only once and long ago"


def build(question: str, answer_text: str, n: int) -> dict:
    texts = [answer_text, negate(answer_text), near_miss(answer_text), "The person never talked about this."][:n]
    seen: set[str] = set()
    for i, t in enumerate(texts):
        candidate, k = t, 1
        while contract.option_key(candidate) in seen:
            k += 1
            candidate = f"{t} (variant {k})"
        seen.add(contract.option_key(candidate))
        texts[i] = candidate
    options = [{"kind": kind, "text": t} for kind, t in zip(contract.KINDS_BY_COUNT[n], texts)]
    return {"question": question, "options": options, "correct_answer": "A"}


def answer(prompt: str) -> str:
    m = _COUNT.search(prompt)
    n = int(m.group(1)) if m else 3
    question = (read_block(prompt, "atomic_question") or "").strip()
    answer_text = (read_block(prompt, "atomic_answer") or "").strip()
    return json.dumps(build(question, answer_text, n))
