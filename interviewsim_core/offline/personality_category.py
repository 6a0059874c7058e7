"""Offline personality category: the category whose cue words the profile and questions use most.

Part of the offline smoke-test baseline: a hand-written lexicon per category over stemmed words;
a tie goes to the earlier category in the contract's list; no cue word at all gives
Public Service & Social Influence, the category of most people who give press interviews.
"""

from __future__ import annotations

import json

from ..contracts import personality_category as contract
from ._text import Lexicon

LEXICON = {
    "Film & Television": "film movie actor actress television show series director role hollywood screen",
    "Music": "album song music band tour singer record concert musician guitar",
    "Sports": "team game season coach championship player match league olympic score",
    "Business & Technology": "company business market startup technology ceo investor product customer software",
    "Science & Academia": "research science scientist university professor study experiment theory academic",
    "Media & Internet": "journalist podcast youtube online internet media blog channel audience newspaper",
    "Arts & Culture": "novel artist painting book theatre writer poetry museum gallery author",
    "Public Service & Social Influence": "president senator government congress policy minister governor "
                                         "administration election vote law war nation activist",
}
_LEXICON = Lexicon(LEXICON, tuple(contract.CATEGORIES))
DEFAULT = "Public Service & Social Influence"


def answer(prompt: str) -> str:
    cat, best = _LEXICON.best(DEFAULT, (1, prompt.split("Person:", 1)[-1]))
    return json.dumps({"category": cat, "reason": f"offline lexicon: {best} cue words of {cat} in the profile and questions"})


RESPONDS = {contract.NAME: answer}
