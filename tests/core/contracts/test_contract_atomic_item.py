"""Atomic item: exactly two labelled lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import atomic_item as ai
from interviewsim_core.errors import ContractParseError

from contract_strategies import line_text


def test_prompt_states_the_item_rules_and_holds_the_pair() -> None:
    msgs = ai.build_messages("Where did you grow up?", "In Lyon, by the river.")
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert ai.MARKER in system
    for phrase in ("one claim", "short, exact answer", "no outside knowledge", "add no information"):
        assert phrase in system
    assert "Where did you grow up?" in user and "In Lyon, by the river." in user


@pytest.mark.parametrize(
    "raw, q, a",
    [
        ("Atomic Question: Where?\nAtomic Answer: Lyon", "Where?", "Lyon"),
        ("\n  Atomic Question:  Where? \r\nAtomic Answer: Lyon  \n", "Where?", "Lyon"),
        ("Atomic Question:Where?\nAtomic Answer:Lyon", "Where?", "Lyon"),
    ],
)
def test_valid(raw: str, q: str, a: str) -> None:
    r = ai.parse(raw)
    assert (r.question, r.answer) == (q, a)


@pytest.mark.parametrize(
    "raw",
    [
        "Atomic Answer: Lyon\nAtomic Question: Where?",
        "Atomic Question: Where?",
        "Atomic Question: Where?\n\nAtomic Answer: Lyon",
        "Atomic Question: Where?\nAtomic Answer: Lyon\nNote: easy",
        "atomic question: Where?\nAtomic Answer: Lyon",
        "Question: Where?\nAnswer: Lyon",
        "Atomic Question: \nAtomic Answer: Lyon",
        "Atomic Question: Where?\nAtomic Answer:   ",
        "Here is the item:\nAtomic Question: Where?\nAtomic Answer: Lyon",
        "",
    ],
)
def test_malformed(raw: str) -> None:
    with pytest.raises(ContractParseError):
        ai.parse(raw)


@given(q=line_text, a=line_text)
def test_property_valid(q: str, a: str) -> None:
    r = ai.parse(f"Atomic Question: {q}\nAtomic Answer: {a}")
    assert (r.question, r.answer) == (q.strip(), a.strip())


@given(q=line_text, a=line_text, extra=line_text, mutation=st.sampled_from(["extra", "missing", "swap", "recase", "blank"]))
def test_property_mutated(q, a, extra, mutation) -> None:
    lines = [f"Atomic Question: {q}", f"Atomic Answer: {a}"]
    if mutation == "extra":
        lines.append(extra)
    elif mutation == "missing":
        lines.pop()
    elif mutation == "swap":
        lines.reverse()
    elif mutation == "recase":
        lines[0] = "ATOMIC QUESTION: " + q
    elif mutation == "blank":
        lines[1] = "Atomic Answer: "
    with pytest.raises(ContractParseError):
        ai.parse("\n".join(lines))
