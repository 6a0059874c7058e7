"""Offline MCQ generation: distractors by rule, always satisfying the parser.

Part of the offline smoke-test baseline, not a model of quality. opposite_negation swaps a
leading yes/no, or drops or inserts a negation; near_miss changes one detail: the first number
moved by one, else a word swapped for its counterpart from a small lexicon (first/last,
before/after, months, ...), else the most specific (longest) content word replaced by a
same-shaped word from a fixed pool, chosen by hash. A real near miss is wrong in one detail and
otherwise identical, so a reader (or the offline answerer) can only tell it apart by knowing that
detail; appending generic words instead would make the distractor a superset of the answer and
reward a word-counting answerer for picking it. plausible_misconception says the topic never came
up. Texts are made unique under the contract's own comparison by suffixing a variant number when
two would collide.
"""

from __future__ import annotations

import hashlib
import json
import re

from ..contracts import mcq_generation as contract
from ._text import NEGATIONS, STOPWORDS, read_block


AUXILIARIES = frozenset(
    "is was are were am do does did can could will would has have had should must".split()
)
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven")
_COUNT = re.compile(r"^Number of options: ([34])$", re.MULTILINE)
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[A-Za-z]+")

_PAIRS = (
    ("first", "last"), ("before", "after"), ("early", "late"), ("earlier", "later"), ("more", "less"),
    ("bigger", "smaller"), ("big", "small"), ("young", "old"), ("north", "south"), ("east", "west"),
    ("summer", "winter"), ("spring", "autumn"), ("morning", "evening"), ("mother", "father"),
    ("brother", "sister"), ("son", "daughter"), ("husband", "wife"), ("once", "twice"),
    ("always", "sometimes"), ("up", "down"), ("week", "month"), ("weeks", "months"), ("day", "week"),
    ("years", "decades"), ("year", "decade"),
)
_COUNTERPART = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS if b not in {x for x, _ in _PAIRS}}
_CYCLES = (
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"),
    ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"),
)
# Replacement pools for the fallback, by the shape of the word replaced (so the sentence still reads).
_POOLS = {
    "proper": ("Hallam", "Brantwood", "Kelso", "Marlow", "Ostley", "Penrith", "Dunmore", "Ashcombe"),
    "ing": ("painting", "travelling", "teaching", "farming", "sailing", "writing", "building", "selling"),
    "ed": ("painted", "travelled", "closed", "borrowed", "planted", "repaired", "sold", "moved"),
    "ly": ("slowly", "rarely", "quietly", "loudly", "gladly", "briefly", "openly", "gently"),
    "s": ("boats", "letters", "horses", "gardens", "trains", "bridges", "orchards", "engines"),
    "other": ("garden", "harbour", "bakery", "school", "village", "river", "library", "market"),
}



def negate(text: str) -> str:
    """The statement's negation (or, when already negative, its affirmation)."""
    words = text.split()
    lead = words[0].lower().strip(".,;:!?") if words else ""
    if lead in ("yes", "no"):  # a leading yes/no carries the polarity
        flipped = "No" if lead == "yes" else "Yes"
        return " ".join([flipped + words[0][len(lead) :]] + words[1:])
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
    keep_case = words and (words[0] == "I" or words[0].startswith("I'"))
    return "Not " + (text if keep_case else text[:1].lower() + text[1:])


def _with_case(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def _swap(word: str) -> str | None:
    """The lexicon counterpart of a word (case kept), or None."""
    low = word.lower()
    if low in _COUNTERPART:
        return _with_case(_COUNTERPART[low], word)
    for cycle in _CYCLES:
        if low in cycle:
            return _with_case(cycle[(cycle.index(low) + 1) % len(cycle)], word)
    return None


def _pool_for(word: str, sentence_start: bool) -> tuple[str, ...]:
    if word[:1].isupper() and not sentence_start:
        return _POOLS["proper"]
    for shape in ("ing", "ed", "ly", "s"):
        if word.lower().endswith(shape):
            return _POOLS[shape]
    return _POOLS["other"]


def near_miss(text: str) -> str:
    """The same statement with one detail changed (see the module docstring for the order of rules)."""
    m = _DIGITS.search(text)
    if m:
        return text[: m.start()] + str(int(m.group()) + 1) + text[m.end() :]
    words = list(_WORD.finditer(text))
    for w in words:
        bare = w.group().lower()
        if bare in NUMBER_WORDS[:-1]:
            return text[: w.start()] + _with_case(NUMBER_WORDS[NUMBER_WORDS.index(bare) + 1], w.group()) + text[w.end() :]
    for w in words:
        swapped = _swap(w.group())
        if swapped is not None:
            return text[: w.start()] + swapped + text[w.end() :]
    content = [w for w in words if w.group().lower() not in STOPWORDS and w.group().lower() not in NEGATIONS]
    if not content:
        return f"{text.rstrip('.')}, once"
    target = max(content, key=lambda w: len(w.group()))  # first longest: the most specific detail
    present = {w.group().lower() for w in words}
    pool = [p for p in _pool_for(target.group(), target.start() == words[0].start()) if p.lower() not in present]
    pick = pool[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(pool)]
    return text[: target.start()] + _with_case(pick, target.group()) + text[target.end() :]


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


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""
