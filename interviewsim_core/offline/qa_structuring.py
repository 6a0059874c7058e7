"""Offline QA structuring: the curation's QA rule (``curation/structuring.py``) over the prompt's turns.

The rule is the offline path by design (issue 31): the offline model answers exactly what the rule
gives, so an offline curation reproduces the rule and a real model is checked against the same
parser.
"""

from __future__ import annotations

import json
import re

from ..contracts import qa_structuring as contract

_TURN = re.compile(r"^\[(?P<i>\d+)\] (?P<role>person|interviewer|other) \((?P<label>.*?)\): (?P<text>.*)$", re.MULTILINE)


def result(prompt: str) -> contract.Result:
    """The rule's pairs over the prompt's turns as the contract's typed result: what
    ``contract.parse(answer(prompt), turns)`` returns (tests/core/curation check it), built without the JSON
    round trip, for the planner (``curation/plan.py``), which needs only the values."""
    from ..curation.models import Transcript
    from ..curation.structuring import structure

    found = list(_TURN.finditer(prompt.split("\nTurns (", 1)[-1]))
    turns = [{"index": int(m["i"]), "label": m["label"], "text": m["text"], "line": 0} for m in found]
    pairs, _stats = structure(Transcript(file="prompt", format="text", turns=turns, removed={}), [m["role"] for m in found])
    # fields validated in one call per model (pydantic-core builds the nested models: faster than model_construct)
    return contract.Result(pairs=[{"question_turn": p.question_turn, "response_turns": p.response_turns,
                                   "question": p.question, "response": p.response} for p in pairs])


def answer(prompt: str) -> str:
    return json.dumps({"pairs": [{"question_turn": p.question_turn, "response_turns": list(p.response_turns),
                                  "question": p.question, "response": p.response} for p in result(prompt).pairs]},
                      ensure_ascii=False)


RESPONDS = {contract.NAME: answer}
RESULTS = {contract.NAME: result}
