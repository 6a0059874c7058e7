"""Offline thematic tagging: each pair to the category whose cue words it uses most (question x2 + answer).

Part of the offline smoke-test baseline: a small hand-written lexicon per category, counted over
stemmed content words; the question counts double (a category is what the question probes). A tie
goes to the earlier category in ``schema.THEMATIC_CATEGORIES``; a pair with no cue word at all is
Motivations and Values, the commonest kind of question in interviews of public figures.
"""

from __future__ import annotations

import json
import re

from ..contracts import thematic_tagging as contract
from ..schema import THEMATIC_CATEGORIES
from ._text import stem, tokens

LEXICON = {
    "Social Identity": "family wife husband children son daughter mother father community country nation american "
                       "people party democrat republican religion church faith race black white women men generation "
                       "citizen member group neighbor friend union",
    "Motivations and Values": "believe value goal want should ought important principle duty right wrong freedom "
                              "peace justice responsibility purpose hope aim priority policy fair commit",
    "Identity Narrative": "remember when years ago career experience childhood grew learned decided past history "
                          "became started first began early life story plan future campaign election",
    "Psychological Traits": "feel felt personally temper patient worry worried confident afraid fear proud angry "
                            "happy humor nervous mood style enjoy tired pressure emotion disappointed surprised",
}
_STEMS = {cat: {stem(w) for w in words.split()} for cat, words in LEXICON.items()}
_CATEGORIES_OF = {s: tuple(c for c in THEMATIC_CATEGORIES if s in _STEMS[c]) for stems in _STEMS.values() for s in stems}
"""stem -> the categories whose lexicon holds it: one lookup per token (the plan of a large curation tags every pair)."""
DEFAULT = "Motivations and Values"
_PAIR = re.compile(r"^\[\d+\] Q: (?P<q>.*)\n    A: (?P<a>.*)$", re.MULTILINE)


def category(question: str, response: str) -> str:
    counts = {c: 0 for c in THEMATIC_CATEGORIES}
    for weight, text in ((2, question), (1, response)):
        for tok in tokens(text):
            for c in _CATEGORIES_OF.get(stem(tok), ()):
                counts[c] += weight
    best = max(counts.values())
    return DEFAULT if best == 0 else next(c for c in THEMATIC_CATEGORIES if counts[c] == best)


def answer(prompt: str) -> str:
    return json.dumps({"tags": [category(m["q"], m["a"]) for m in _PAIR.finditer(prompt)]})


RESPONDS = {contract.NAME: answer}
