"""Offline speaker attribution: roles from each item's own statistics, as the prompt states them.

Part of the offline smoke-test baseline (deterministic, no knowledge of anyone): an item whose turns
mostly ask (at least half end in or hold a question) is an interviewer; when the rule has not placed
the person, the non-asking diarisation id (``SPEAKER_01``: a label that names nobody) with the most
words is the person (in a diarised interview the interviewee speaks most; a label that is a
name other than the person's is someone else), and an unlabelled caption (``#<turn>``) that does not ask is the person;
everything else is someone other.
"""

from __future__ import annotations

import json
import re

from ..contracts import speaker_attribution as contract

_ITEM = re.compile(r'^\[(?P<item>\d+)\] label (?P<label>".*"): (?P<turns>\d+) turns, (?P<words>\d+) words, (?P<asks>\d+) asking$',
                   re.MULTILINE)


_OPAQUE = re.compile(r"^(?:speaker|spk|s)?[\s_-]*\d+$|^[A-Z]$", re.IGNORECASE)


def answer(prompt: str) -> str:
    items = [(int(m["item"]), json.loads(m["label"]), int(m["turns"]), int(m["words"]), int(m["asks"])) for m in _ITEM.finditer(prompt)]
    person_placed = "=person" in prompt.split("Labels already placed:", 1)[-1].split("\n", 1)[0]
    asking = {i for i, _l, turns, _w, asks in items if asks * 2 >= turns and asks > 0}
    talkers = sorted((i for i, label, *_ in items if i not in asking and _OPAQUE.match(label)), key=lambda i: -items[i - 1][3])
    speaker_id = talkers[0] if talkers and not person_placed else None
    out = []
    for i, label, turns, words, asks in items:
        if i in asking:
            role, why = "interviewer", f"{asks} of {turns} turns ask a question"
        elif not person_placed and label.startswith("#"):
            role, why = "person", "an unlabelled caption that does not ask: the interviewee answering"
        elif i == speaker_id and not label.startswith("#"):
            role, why = "person", f"asks nothing and says the most ({words} words) while the person is unplaced"
        else:
            role, why = "other", "asks no question" + (" and the person is already placed" if person_placed else "")
        out.append({"item": i, "role": role, "reason": why})
    return json.dumps({"speakers": out})


RESPONDS = {contract.NAME: answer}
