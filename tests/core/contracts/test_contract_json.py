"""The strict JSON reader shared by every JSON contract."""

from __future__ import annotations

import pytest

from interviewsim_core.contracts._json import load_object, require_int, unfence
from interviewsim_core.errors import ContractParseError


@pytest.mark.parametrize(
    "raw, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('  {"a": 1}\n', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```JSON\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('\n```json\n  {"a": "x```y"}  \n```\n', {"a": "x```y"}),
        ('```json\n{"a": 1}```', {"a": 1}),
    ],
)
def test_accepts_one_object_bare_or_fenced(raw: str, expected: dict) -> None:
    assert load_object(raw, "t") == expected


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("", "empty"),
        ("```json\n\n```", "empty"),
        ('{"a": 1} trailing', "Extra data"),
        ('Here you go: {"a": 1}', "not one JSON object"),
        ('{"a": 1}{"a": 2}', "Extra data"),
        ('```json\n{"a": 1}\n```\nthanks', "not one JSON object"),
        ('```python\n{"a": 1}\n```', "not one JSON object"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"o": {"b": 1, "b": 1}}', "duplicate key 'b'"),
        ('{"a": NaN}', "non-standard JSON constant NaN"),
        ('{"a": Infinity}', "non-standard JSON constant Infinity"),
        ("[1, 2]", "must be an object"),
        ('"text"', "must be an object"),
        ("{'a': 1}", "not one JSON object"),
    ],
)
def test_rejects_everything_else(raw: str, reason: str) -> None:
    with pytest.raises(ContractParseError) as exc:
        load_object(raw, "t")
    assert reason in exc.value.reason
    assert exc.value.raw == raw
    assert exc.value.contract == "t"


def test_non_text_reply_is_a_parse_error() -> None:
    with pytest.raises(ContractParseError):
        load_object(None, "t")  # type: ignore[arg-type]


def test_bool_is_not_an_int() -> None:
    with pytest.raises(ContractParseError, match="integer"):
        require_int(True, "score", 1, 5, "t", "raw")
    with pytest.raises(ContractParseError, match="integer"):
        require_int(4.0, "score", 1, 5, "t", "raw")


def test_unfence_leaves_unfenced_text_alone() -> None:
    assert unfence("  plain  ") == "plain"
