"""MCQ answering: grouped prompt, strict Q-lines parser, and scoring by retained role."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import mcq_answering as ma
from interviewsim_core.contracts.mcq_generation import LABELS_BY_COUNT, ShuffledItem
from interviewsim_core.errors import ContractParseError

ITEM3 = ShuffledItem(question="Where did you grow up?", labels=("A", "B", "C"), texts=("In Lille", "In Lyon", "Not in Lyon"),
                     kinds=("near_miss", "correct", "opposite_negation"), correct_label="B")
ITEM4 = ShuffledItem(question="What year did you move?", labels=("A", "B", "C", "D"),
                     texts=("1972", "Never moved", "1971", "1980"),
                     kinds=("near_miss", "opposite_negation", "correct", "plausible_misconception"), correct_label="C")


@dataclass(frozen=True)
class _Pair:
    question: str
    response: str


@dataclass(frozen=True)
class _Ctx:
    profile_text: str | None
    examples: tuple


def test_prompt_presents_context_then_every_item_as_q1_to_qn() -> None:
    ctx = _Ctx(None, (_Pair("Your home town?", "Lyon, always Lyon."),))
    msgs = ma.build_messages("P7", ctx, [ITEM3, ITEM4])
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert ma.MARKER in system and "Speak as P7" in system and "Personality ID: P7" in system
    assert user.index("Lyon, always Lyon.") < user.index("Q1: Where did you grow up?") < user.index("Q2: What year")
    for line in ("A. In Lille", "B. In Lyon", "C. Not in Lyon", "D. 1980"):
        assert line in user.splitlines()
    assert "exactly 2 line(s), Q1 to Q2" in user


def test_prompt_with_profile_only_and_with_nothing() -> None:
    assert "Profile:\nBorn in Lyon." in ma.build_messages("P", _Ctx("Born in Lyon.", ()), [ITEM3])[1]["content"]
    assert "Context: none." in ma.build_messages("P", None, [ITEM3])[1]["content"]
    with pytest.raises(ValueError):
        ma.build_messages("P", None, [])


SETS = [("A", "B", "C"), ("A", "B", "C", "D")]


@pytest.mark.parametrize(
    "raw, answers",
    [
        ("Q1: B\nQ2: D", ("B", "D")),
        ("  Q1:B \r\nQ2:   A\n", ("B", "A")),
    ],
)
def test_valid(raw: str, answers: tuple) -> None:
    assert ma.parse(raw, SETS).answers == answers


@pytest.mark.parametrize(
    "raw",
    [
        "Q1: B",
        "Q1: B\nQ2: D\nQ3: A",
        "Q2: D\nQ1: B",
        "Q1: B\nQ1: D",
        "Q1: B\n\nQ2: D",
        "Q1: D\nQ2: D",
        "Q1: b\nQ2: D",
        "Q1: B.\nQ2: D",
        "Q1: (B)\nQ2: D",
        "Q1: B C\nQ2: D",
        "Q1: \nQ2: D",
        "q1: B\nQ2: D",
        "1: B\n2: D",
        "Answers:\nQ1: B\nQ2: D",
        "Q01: B\nQ2: D",
        "",
    ],
)
def test_malformed(raw: str) -> None:
    with pytest.raises(ContractParseError):
        ma.parse(raw, SETS)


def test_caller_must_give_label_sets() -> None:
    with pytest.raises(ValueError):
        ma.parse("Q1: A", [])


label_sets = st.lists(st.sampled_from([LABELS_BY_COUNT[3], LABELS_BY_COUNT[4]]), min_size=1, max_size=8)


@given(sets=label_sets, data=st.data())
def test_property_valid(sets, data) -> None:
    answers = [data.draw(st.sampled_from(s)) for s in sets]
    raw = "\n".join(f"Q{i}: {a}" for i, a in enumerate(answers, 1))
    assert ma.parse(raw, sets).answers == tuple(answers)


@given(sets=label_sets, data=st.data(), mutation=st.sampled_from(["drop", "extra", "swap", "dup", "unavailable", "lower", "prose"]))
def test_property_mutated(sets, data, mutation) -> None:
    answers = [data.draw(st.sampled_from(s)) for s in sets]
    lines = [f"Q{i}: {a}" for i, a in enumerate(answers, 1)]
    if mutation == "drop":
        lines.pop(data.draw(st.integers(0, len(lines) - 1)))
    elif mutation == "extra":
        lines.append(f"Q{len(lines) + 1}: A")
    elif mutation == "swap":
        if len(lines) < 2:
            lines.insert(0, "Q2: A")
        else:
            lines[0], lines[1] = lines[1], lines[0]
    elif mutation == "dup":
        lines.insert(0, lines[0])
    elif mutation == "unavailable":
        k = data.draw(st.integers(0, len(lines) - 1))
        lines[k] = f"Q{k + 1}: {'D' if len(sets[k]) == 3 else 'E'}"
    elif mutation == "lower":
        lines[0] = lines[0].lower()
    elif mutation == "prose":
        lines.insert(0, "Here are my answers:")
    with pytest.raises(ContractParseError):
        ma.parse("\n".join(lines), sets)


@pytest.mark.parametrize(
    "item, chosen, expected",
    [
        (ITEM3, "B", ("correct", 1, 1.0)),
        (ITEM3, "C", ("opposite_negation", 0, -1.0)),
        (ITEM3, "A", ("near_miss", 0, -0.5)),
        (ITEM3, "D", ("unavailable", 0, -0.5)),
        (ITEM3, None, ("malformed", 0, -0.5)),
        (ITEM4, "C", ("correct", 1, 1.0)),
        (ITEM4, "B", ("opposite_negation", 0, -1.0)),
        (ITEM4, "A", ("near_miss", 0, -0.5)),
        (ITEM4, "D", ("plausible_misconception", 0, -0.5)),
        (ITEM4, "E", ("unavailable", 0, -0.5)),
        (ITEM4, None, ("malformed", 0, -0.5)),
    ],
)
def test_score_answer(item, chosen, expected) -> None:
    assert ma.score_answer(chosen, item) == expected


def test_label_sets_of_matches_items() -> None:
    assert ma.label_sets_of([ITEM3, ITEM4]) == SETS
