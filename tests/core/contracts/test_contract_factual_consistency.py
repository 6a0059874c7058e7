"""Factual Consistency: three exact labels, nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import factual_consistency as fc
from interviewsim_core.errors import ContractParseError

from contract_strategies import any_text, fence


def test_prompt_lists_the_three_labels_and_orders_summary_before_answer() -> None:
    msgs = fc.build_messages("She lives in Oslo.", "I live in Rome.")
    system, user = msgs[0]["content"], msgs[1]["content"]
    for label in fc.LABELS:
        assert label in system
    assert "only the fact summary" in system
    assert user.index("She lives in Oslo.") < user.index("I live in Rome.")


@pytest.mark.parametrize("label", fc.LABELS)
def test_each_label_parses(label: str) -> None:
    assert fc.parse(json.dumps({"label": label, "explanation": "because"})).label == label


@pytest.mark.parametrize(
    "label",
    ["entailment", "NEUTRAL", "Contradicts", "Contradiction.", " Neutral", "Neutral ", "Supported", "Unknown", ""],
)
def test_recased_synonym_or_padded_labels_fail(label: str) -> None:
    with pytest.raises(ContractParseError, match="label must be one of"):
        fc.parse(json.dumps({"label": label, "explanation": "because"}))


@pytest.mark.parametrize(
    "raw",
    [
        '{"label": "Neutral"}',
        '{"label": "Neutral", "explanation": "e", "score": 1}',
        '{"label": 1, "explanation": "e"}',
        '{"label": "Neutral", "explanation": "\\n"}',
        '{"label": "Neutral", "label": "Neutral", "explanation": "e"}',
        'Neutral',
    ],
)
def test_malformed(raw: str) -> None:
    with pytest.raises(ContractParseError):
        fc.parse(raw)


@given(label=st.sampled_from(fc.LABELS), explanation=any_text, fenced=st.booleans())
def test_property_valid(label: str, explanation: str, fenced: bool) -> None:
    body = json.dumps({"label": label, "explanation": explanation})
    assert fc.parse(fence(body) if fenced else body).label == label


@given(
    label=st.sampled_from(fc.LABELS),
    explanation=any_text,
    recase=st.sampled_from([str.lower, str.upper, str.swapcase, lambda s: s + "s", lambda s: s[:-1]]),
)
def test_property_recased_or_altered_labels_fail(label, explanation, recase) -> None:
    with pytest.raises(ContractParseError):
        fc.parse(json.dumps({"label": recase(label), "explanation": explanation}))
