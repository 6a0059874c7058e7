"""Generation prompts: the paper's instruction, context kinds, question last, no held-out response."""

from __future__ import annotations

import pytest

from interviewsim_core.contracts import generation as gen
from interviewsim_core.errors import ContractParseError
from interviewsim_core.schema import QAPair
from interviewsim_core.split import PairRef
from interviewsim_core.strategies._base import GenerationContext



def _ref(i: int, q: str, r: str) -> PairRef:
    return PairRef(QAPair(qa_id=f"qa{i}", question=q, response=r), "itv1", 1, i, i)


def _ctx(profile: str | None = None, examples: tuple[PairRef, ...] = ()) -> GenerationContext:
    return GenerationContext(profile_text=profile, examples=examples, n_requested=len(examples),
                             n_used=len(examples), strategy="test")


def test_no_context_prompt() -> None:
    msgs = gen.build_messages("P3", "What do you fear most?", None)
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert "Speak as P3. Answer the following question as P3 would." in system
    assert "Personality ID: P3" in system and gen.MARKER in system
    assert "only the text of one response" in system
    assert user.endswith("New question: What do you fear most?\nReturn response text only.")
    assert "Context: none." in user


def test_profile_and_examples_come_before_the_question() -> None:
    ctx = _ctx("Born in 1930 in Lyon.\nPainter.")
    user = gen.build_messages("P3", "Where were you born?", ctx)[1]["content"]
    assert user.index("Born in 1930") < user.index("New question:")
    ex = (_ref(0, "Your first job?", "I sold paint.\nIn Lyon."), _ref(1, "Your wife?", "Marie."))
    user = gen.build_messages("P3", "Where were you born?", _ctx(None, ex))[1]["content"]
    lines = user.splitlines()
    assert lines[1:5] == [
        "Training example question: Your first job?",
        "Training example response: I sold paint. In Lyon.",
        "Training example question: Your wife?",
        "Training example response: Marie.",
    ]
    assert user.index("Marie.") < user.index("New question:")


def test_the_held_out_pair_cannot_be_passed_as_an_object() -> None:
    with pytest.raises(TypeError):
        gen.build_messages("P3", _ref(9, "Held-out question?", "HELD OUT RESPONSE"), None)  # type: ignore[arg-type]


def test_blank_inputs_refused() -> None:
    with pytest.raises(ValueError):
        gen.build_messages("P", "  ", None)
    with pytest.raises(ValueError):
        gen.build_messages(" ", "Q?", None)


@pytest.mark.parametrize("raw, expected", [("I was born in Lyon.", "I was born in Lyon."), ("\n  Well. \n", "Well.")])
def test_parse_valid(raw: str, expected: str) -> None:
    assert gen.parse(raw).response == expected


@pytest.mark.parametrize("raw", ["", "   ", "\n\t"])
def test_parse_blank_fails(raw: str) -> None:
    with pytest.raises(ContractParseError):
        gen.parse(raw)
