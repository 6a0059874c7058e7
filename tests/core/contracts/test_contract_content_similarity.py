"""Content Similarity: prompt content and the strict score/explanation parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import content_similarity as cs
from interviewsim_core.errors import ContractParseError

from contract_strategies import any_text, blank_text, fence


def test_prompt_has_rubric_first_and_both_responses_last() -> None:
    msgs = cs.build_messages("I grew up in Lyon.", "I was raised in Lyon.")
    assert [m["role"] for m in msgs] == ["system", "user"]
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert cs.MARKER in system
    for line in ("1: the candidate contradicts", "2: limited overlap", "3: some overlap", "4: the main points", "5: the same core ideas"):
        assert line in system
    assert "wording" in system and "length" in system
    assert user.index("I grew up in Lyon.") < user.index("I was raised in Lyon.")
    assert "I grew up" not in system


def test_prompt_refuses_blank_inputs() -> None:
    with pytest.raises(ValueError):
        cs.build_messages(" ", "x")


@pytest.mark.parametrize(
    "raw, score",
    [
        ('{"score": 4, "explanation": "Main points kept."}', 4),
        ('{"explanation": "Same ideas.", "score": 5}', 5),
        ('```json\n{"score": 1, "explanation": "Misses it."}\n```', 1),
        ('```\n{"score": 3, "explanation": "Partial."}\n```', 3),
    ],
)
def test_valid_replies(raw: str, score: int) -> None:
    assert cs.parse(raw).score == score


@pytest.mark.parametrize(
    "raw",
    [
        '{"score": 0, "explanation": "x"}',
        '{"score": 6, "explanation": "x"}',
        '{"score": -1, "explanation": "x"}',
        '{"score": true, "explanation": "x"}',
        '{"score": 4.0, "explanation": "x"}',
        '{"score": "4", "explanation": "x"}',
        '{"score": null, "explanation": "x"}',
        '{"score": 4, "explanation": ""}',
        '{"score": 4, "explanation": "   "}',
        '{"score": 4, "explanation": 7}',
        '{"score": 4}',
        '{"explanation": "x"}',
        '{"score": 4, "explanation": "x", "confidence": 0.9}',
        '{"score": 4, "score": 4, "explanation": "x"}',
        'Score: 4. {"score": 4, "explanation": "x"}',
        '{"score": 4, "explanation": "x"}\nHope this helps.',
        "4",
        "",
    ],
)
def test_malformed_replies(raw: str) -> None:
    with pytest.raises(ContractParseError) as exc:
        cs.parse(raw)
    assert exc.value.raw == raw and exc.value.contract == cs.NAME


@given(score=st.integers(1, 5), explanation=any_text, fenced=st.booleans())
def test_property_valid_outputs_parse(score: int, explanation: str, fenced: bool) -> None:
    body = json.dumps({"score": score, "explanation": explanation})
    result = cs.parse(fence(body) if fenced else body)
    assert result.score == score and result.explanation == explanation.strip()


@given(
    score=st.integers(1, 5),
    explanation=any_text,
    mutation=st.sampled_from(["extra", "drop", "dup", "bool", "float", "str", "low", "high", "blank", "trail"]),
    other=st.one_of(st.integers(), st.booleans()),
    blank=blank_text,
)
def test_property_mutated_outputs_fail(score, explanation, mutation, other, blank) -> None:
    obj: dict = {"score": score, "explanation": explanation}
    body = None
    if mutation == "extra":
        obj["note"] = explanation
    elif mutation == "drop":
        del obj["explanation"]
    elif mutation == "dup":
        body = '{"score": %d, "score": %d, "explanation": %s}' % (score, score, json.dumps(explanation))
    elif mutation == "bool":
        obj["score"] = bool(other)
    elif mutation == "float":
        obj["score"] = float(score)
    elif mutation == "str":
        obj["score"] = str(score)
    elif mutation == "low":
        obj["score"] = min(0, -abs(int(other)))
    elif mutation == "high":
        obj["score"] = 6 + abs(int(other))
    elif mutation == "blank":
        obj["explanation"] = blank
    body = body or json.dumps(obj)
    if mutation == "trail":
        body += "\nDone."
    with pytest.raises(ContractParseError):
        cs.parse(body)
