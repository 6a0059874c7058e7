"""Offline atomic item: the response's first sentence is the fact; the question asks for it."""

from __future__ import annotations

from ..contracts import atomic_item as contract
from ._text import first_sentence, one_line, read_block

MAX_ANSWER_WORDS = 25



def answer(prompt: str) -> str:
    question = one_line(read_block(prompt, "question") or "") or "this question"
    fact = first_sentence(read_block(prompt, "response") or "") or "No answer was given."
    words = fact.split()
    if len(words) > MAX_ANSWER_WORDS:  # keep the answer short; a prefix of the sentence stays exact
        fact = " ".join(words[:MAX_ANSWER_WORDS])
    return (
        f"{contract.QUESTION_LABEL} What did the person state first when asked: {question}\n"
        f"{contract.ANSWER_LABEL} {fact}"
    )


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""
