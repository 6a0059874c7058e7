"""Offline quality control: a verdict from the turn statistics the prompt states (no content reading).

Part of the offline smoke-test baseline: the person silent when they say under ``MIN_PERSON_WORDS``
words; a scripted monologue when fewer than ``MIN_ANSWERED`` questions are answered; a group
discussion when other speakers together say more than the person; otherwise an interview.
"""

from __future__ import annotations

import json
import re

from ..contracts import transcript_quality as contract

MIN_PERSON_WORDS = 20
MIN_ANSWERED = 2

_STATS = re.compile(r"^Statistics: (?P<body>.*)$", re.MULTILINE)


def answer(prompt: str) -> str:
    m = _STATS.search(prompt)
    stats = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m["body"] if m else "")}
    person, other, answered = stats.get("person_words", 0), stats.get("other_words", 0), stats.get("answered_questions", 0)
    if person < MIN_PERSON_WORDS:
        kind, why = "person_silent", f"the person says {person} words"
    elif answered < MIN_ANSWERED:
        kind, why = "scripted_monologue", f"only {answered} question(s) answered in {person} words of the person"
    elif other > person:
        kind, why = "group_discussion", f"other speakers say {other} words, more than the person's {person}"
    else:
        kind, why = "interview", f"{answered} questions answered; the person says {person} words, others {other}"
    return json.dumps({"kind": kind, "reason": why})


RESPONDS = {contract.NAME: answer}
