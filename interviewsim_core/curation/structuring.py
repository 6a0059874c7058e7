"""QA structuring: question-answer pairs from attributed turns; ``structure`` is the rule (the offline
model answers ``contracts/qa_structuring`` with it), ``plan``/``assemble`` ask the model.

A **question** is an interviewer turn that asks something (it holds a ``?``). The **response** is
the person's reply: the person's turns that follow it, up to the next turn that is not the person's
(an interviewer's next question or remark, or someone else speaking), so no response ever holds an
interviewer's words. A question the person does not answer (the next speaker is someone else) makes
no pair; the person's turns before the first question (an opening statement) make none either.
Pairs with fewer than ``MIN_WORDS`` words on either side are dropped, as the reference corpus does.

Normalisation removes disfluencies (``uh``, ``um``, ``er``; an immediately repeated short word,
"I I think") and collapses spaces; it never rewrites a word, so the person's own words and style
stay. The raw span (the turns' text as ingested) is kept beside the normalised text.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence

from ..contracts import qa_structuring as qa_contract
from ..llm.types import ModelConfig
from ..pipeline.calls import PlannedCall, contract_request, result_for
from .models import QAPairDraft, Role, Transcript, failure_of

MIN_WORDS = 3
_FILLER = re.compile(r"[uUeEaA](?<![\w'].)(?:(?<=[uU])(?:[hH]+|[mM]+)|(?<=[eE])[rR][mM]?|(?<=[aA])[hH])(?![\w'])[,.]?\s*")
"""``uh``, ``um``, ``erm``, ``er``, ``ah`` in any case (more h's and m's too) as a whole word, with a comma or full stop
and the spaces after it. Written to open with its first letter (``[uUeEaA]``, the "not inside a word" test just after
it) rather than ``(?i)`` and a look-behind: the regex engine then skips to candidate letters instead of trying every
position, 2x faster, same matches (tests/core/curation/test_structuring.py)."""
_REPEAT = re.compile(r"([IiİıAaTtWwYyOoBbSsſ](?<!\w.)(?:(?<=[Iiİı])(?i:|t|n|s)|(?<=[Aa])(?i:|nd)|(?<=[Tt])(?i:he|o)|"
                     r"(?<=[Ww])(?i:e)|(?<=[Yy])(?i:ou)|(?<=[Oo])(?i:f)|(?<=[Bb])(?i:ut)|(?<=[Ssſ])(?i:o)))(?i:[\s,]+\1\b)+")
"""One of the short words i, a, the, and, we, you, it, to, of, in, is, but, so (any case) said again at once, "I I
think": the repeats go. Same trick as ``_FILLER``: it opens with the first letters those words can have under
case-insensitive matching (``İ``, ``ı`` and ``ſ`` included) and tests "not inside a word" just after, rather than
``(?i)\b(i|a|the|...)``, so the engine skips to candidates: 3x faster, the same matches in the same order."""


def normalise(text: str) -> str:
    """Disfluencies out, spaces collapsed, no space before ``,.?!``; every other word kept as spoken.

    The spaces are collapsed first, so the one space left before a mark is removed by ``str.replace``:
    what ``re.sub(r"\s+([,.?!])", r"\1", ...)`` then the collapse gave (``\s`` and ``str.split`` agree on
    what is a space), without a regex trying every space (tests/core/curation/test_plan_fast_path.py)."""
    text = _FILLER.sub("", text)
    text = _REPEAT.sub(lambda m: m.group(1), text)
    text = " ".join(text.split())
    return text.replace(" ,", ",").replace(" .", ".").replace(" ?", "?").replace(" !", "!")


def asks(text: str) -> bool:
    """Whether an interviewer turn asks the person something."""
    return "?" in text


def structure(t: Transcript, roles: Sequence[Role]) -> tuple[list[QAPairDraft], dict[str, int]]:
    """The transcript's pairs in order, and counts of what made no pair (for the curation report)."""
    pairs: list[QAPairDraft] = []
    stats = {"questions": 0, "unanswered": 0, "too_short": 0, "person_turns_outside_pairs": 0}
    question: int | None = None
    reply: list[int] = []

    def close() -> None:
        nonlocal question, reply
        if question is not None and reply:
            q_raw = t.turns[question].text
            r_raw = " ".join(t.turns[i].text for i in reply)
            q, r = normalise(q_raw), normalise(r_raw)
            if len(q.split()) >= MIN_WORDS and len(r.split()) >= MIN_WORDS:
                pairs.append(QAPairDraft(question=q, response=r, raw_question=q_raw, raw_response=r_raw,
                                         question_turn=question, response_turns=tuple(reply)))
            else:
                stats["too_short"] += 1
        elif question is not None:
            stats["unanswered"] += 1
        question, reply = None, []

    for i, (turn, role) in enumerate(zip(t.turns, roles, strict=True)):
        if role == "person":
            if question is None:
                stats["person_turns_outside_pairs"] += 1
            else:
                reply.append(i)
            continue
        if reply or question is not None:
            close()
        if role == "interviewer" and asks(turn.text):
            stats["questions"] += 1
            question = i
    close()
    return pairs, stats


def _turns(t: Transcript, roles: Sequence[Role]) -> list[tuple[str, str, str]]:
    return [(role, turn.label, turn.text) for turn, role in zip(t.turns, roles, strict=True)]


def plan(pid: str, person: str, t: Transcript, roles: Sequence[Role], model: ModelConfig) -> PlannedCall:
    """One ``qa_structuring`` call per kept transcript; the parser is bound to its turns and roles."""
    turns = _turns(t, roles)
    request = contract_request(qa_contract, qa_contract.build_messages(person, turns), item_id=f"{pid}/{t.file}",
                               parser=lambda raw, turns=turns: qa_contract.parse(raw, turns))
    return PlannedCall(("qa_pairs", pid, t.file), model, request, {"file": t.file})


def assemble(pid: str, t: Transcript, results: Mapping[Hashable, object]) -> tuple[list[QAPairDraft], str | None]:
    """The model's pairs with their raw spans (rebuilt from the turn indices), pairs under MIN_WORDS
    dropped; or no pair and the failure, when the call failed."""
    res = result_for(results, ("qa_pairs", pid, t.file))  # type: ignore[arg-type]
    if res.status != "ok":
        return [], f"QA structuring failed for {t.file}: {failure_of(res)}"
    pairs = []
    for p in res.value.pairs:
        if len(p.question.split()) >= MIN_WORDS and len(p.response.split()) >= MIN_WORDS:
            pairs.append(QAPairDraft(question=p.question, response=p.response, raw_question=t.turns[p.question_turn].text,
                                     raw_response=" ".join(t.turns[i].text for i in p.response_turns),
                                     question_turn=p.question_turn, response_turns=p.response_turns))
    return pairs, None
