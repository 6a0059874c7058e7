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
from ._text import Lexicon

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
_LEXICON = Lexicon(LEXICON, tuple(THEMATIC_CATEGORIES))
DEFAULT = "Motivations and Values"
_PAIR = re.compile(r"^\[\d+\] Q: (?P<q>.*)\n    A: (?P<a>.*)$", re.MULTILINE)


def category(question: str, response: str) -> str:
    return _LEXICON.best(DEFAULT, (2, question), (1, response))[0]


def _tags(prompt: str) -> list[str]:
    return [category(m["q"], m["a"]) for m in _PAIR.finditer(prompt)]


def result(prompt: str) -> contract.Result:
    """What ``contract.parse(answer(prompt), pairs)`` returns, without the JSON round trip (the curation's
    planner tags every pair; tests/core/curation check it)."""
    return contract.Result(tags=_tags(prompt))


def answer(prompt: str) -> str:
    return json.dumps({"tags": _tags(prompt)})


RESPONDS = {contract.NAME: answer}
RESULTS = {contract.NAME: result}
