"""Every contract parser, fed anything a model might send: a parse result or a typed
``ContractParseError``, never another exception (hypothesis over all registered contracts)."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interviewsim_core.contracts import REGISTRY, mcq_answering, mcq_generation, premise
from interviewsim_core.errors import ContractParseError

# Field names the contracts use, so generated objects often have the right keys with wrong values.
KEYS = sorted({
    "score", "explanation", "summary", "label", "rate", "question", "answer", "options", "kind", "text",
    "correct_answer", "response", "decontextuality_score", "unknown_slots", "subject", "predicate_and_force",
    "object_or_content", "time", "time_status", "scope", "interpretation", "interpretation_notes", "bundled",
    "licensed_inference", "classification", "primary_cause", "failure_attribution", "unsupported_elements",
    "element", "evidence", "force_preserved", "force_notes", "gap", "attribution", "notes", "labels",
})
scalars = (st.none() | st.booleans() | st.integers(min_value=-10, max_value=10) | st.integers()
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30)
           | st.sampled_from(["High", "Low", "Neutral", "Entailment", "Contradiction", "Neutral", "A", "B",
                              "correct", "near_miss", "PASS", "FAIL", "UNKNOWN", "1", "5"]))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner,
                                                                max_size=8),
    max_leaves=25,
)
objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=12)
raw_text = st.one_of(
    st.text(max_size=400),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400),
    json_values.map(json.dumps),
    objects.map(json.dumps),
    objects.map(lambda o: "```json\n" + json.dumps(o) + "\n```"),
    objects.map(lambda o: "Here you go:\n" + json.dumps(o) + "\ntrailing words"),
    st.lists(st.sampled_from(["Q1: A", "Q2: B", "Q1: Z", "Q3: C", "q1:a", "Q1:", ": A", "Q0: A", "Q1: A B"]),
             max_size=5).map("\n".join),
    st.sampled_from(["<rate>High</rate>", "Rate: High", "Question: x\nAnswer: y", "Question:\nAnswer:",
                     "{", "[]", "null", "\ufeff{}", "{\"score\": 1e309}", "{\"score\": NaN}", "\x00"]),
)

single_arg = {name: c.parse for name, c in REGISTRY.items() if name not in (mcq_generation.NAME, mcq_answering.NAME)}


def _typed_only(parse: Callable[[str], Any], raw: str) -> None:
    try:
        parse(raw)
    except ContractParseError as exc:
        assert exc.raw is not None and exc.reason
    # any other exception propagates and fails the test


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(single_arg))
@FUZZ
@given(raw=raw_text)
def test_single_input_parsers_raise_only_typed_errors(name: str, raw: str) -> None:
    _typed_only(single_arg[name], raw)


@FUZZ
@given(raw=raw_text | objects.map(json.dumps), question=st.text(max_size=40), answer=st.text(max_size=40),
       n=st.sampled_from([3, 4]))
def test_mcq_generation_parser_raises_only_typed_errors(raw: str, question: str, answer: str, n: int) -> None:
    _typed_only(lambda r: mcq_generation.parse(r, question, answer, n), raw)


@FUZZ
@given(raw=raw_text, labels=st.lists(st.sampled_from([("A", "B", "C"), ("A", "B", "C", "D")]), min_size=1, max_size=4))
def test_mcq_answering_parser_raises_only_typed_errors(raw: str, labels: list[tuple[str, ...]]) -> None:
    _typed_only(lambda r: mcq_answering.parse(r, labels), raw)


def test_every_contract_is_fuzzed() -> None:
    assert set(single_arg) | {mcq_generation.NAME, mcq_answering.NAME} == set(REGISTRY)
    assert {premise.PASS1_NAME, premise.PASS2_NAME} <= set(single_arg)
