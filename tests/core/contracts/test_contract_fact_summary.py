"""Fact summary: instructions of the seed, held-out responses only, strict two-field parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import fact_summary as fs
from interviewsim_core.errors import ContractParseError

from contract_strategies import any_text, blank_text, fence


def test_prompt_carries_the_seed_rules_and_the_responses() -> None:
    msgs = fs.build_messages("P1", ["I moved to Oslo in 1971.\nIt was cold.", "I still paint."])
    system, user = msgs[0]["content"].lower(), msgs[1]["content"]
    assert fs.MARKER.lower() in system
    for phrase in ("established facts", "opinions", "recurring characteristics", "outside knowledge",
                   "infer", "uncertainty", "changes over time", "citations", "links", "source identifiers",
                   "provenance"):
        assert phrase in system
    assert "P1" in user
    assert "- I moved to Oslo in 1971. It was cold." in user.splitlines()  # one response per line
    assert "- I still paint." in user.splitlines()


@pytest.mark.parametrize("responses", [[], ["ok", "  "]])
def test_prompt_refuses_empty_collections(responses: list[str]) -> None:
    with pytest.raises(ValueError):
        fs.build_messages("P1", responses)


def test_prompt_refuses_a_single_string() -> None:
    with pytest.raises(TypeError):
        fs.build_messages("P1", "one string")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "raw",
    [
        '{"summary": "Lives in Oslo.", "explanation": "From response 1."}',
        '```json\n{"explanation": "e", "summary": "s"}\n```',
    ],
)
def test_valid(raw: str) -> None:
    r = fs.parse(raw)
    assert r.summary and r.explanation


@pytest.mark.parametrize(
    "raw",
    [
        '{"summary": "s"}',
        '{"summary": "s", "explanation": "e", "sources": ["qa1"]}',
        '{"summary": "s", "summary": "t", "explanation": "e"}',
        '{"summary": ["s"], "explanation": "e"}',
        '{"summary": "s", "explanation": null}',
        '{"summary": " ", "explanation": "e"}',
        '{"summary": "s", "explanation": ""}',
        'Summary: s',
    ],
)
def test_malformed(raw: str) -> None:
    with pytest.raises(ContractParseError):
        fs.parse(raw)


@given(summary=any_text, explanation=any_text, fenced=st.booleans())
def test_property_valid(summary: str, explanation: str, fenced: bool) -> None:
    body = json.dumps({"summary": summary, "explanation": explanation})
    r = fs.parse(fence(body) if fenced else body)
    assert (r.summary, r.explanation) == (summary.strip(), explanation.strip())


@given(
    summary=any_text,
    explanation=any_text,
    field=st.sampled_from(["summary", "explanation"]),
    mutation=st.sampled_from(["extra", "drop", "dup", "type", "blank"]),
    blank=blank_text,
    wrong=st.one_of(st.integers(), st.booleans(), st.none(), st.lists(st.text(), max_size=2)),
)
def test_property_mutated(summary, explanation, field, mutation, blank, wrong) -> None:
    obj = {"summary": summary, "explanation": explanation}
    if mutation == "extra":
        obj["source_id"] = "x"
    elif mutation == "drop":
        del obj[field]
    elif mutation == "type":
        obj[field] = wrong
    elif mutation == "blank":
        obj[field] = blank
    body = json.dumps(obj)
    if mutation == "dup":
        body = body[:-1] + f", {json.dumps(field)}: {json.dumps(obj[field])}}}"
    with pytest.raises(ContractParseError):
        fs.parse(body)
