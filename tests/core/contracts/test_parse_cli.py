"""``interviewsim parse CONTRACT``: stdin in, JSON out (exit 0), or the breach on stderr (exit 1)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from interviewsim_cli import app

runner = CliRunner()


def _run(args: list[str], stdin: str):
    return runner.invoke(app, ["parse", *args], input=stdin)


@pytest.mark.parametrize(
    "args, stdin, expected",
    [
        (["content-similarity"], '```json\n{"score": 4, "explanation": "close"}\n```', {"score": 4, "explanation": "close"}),
        (["fact-summary"], '{"summary": "s", "explanation": "e"}', {"summary": "s", "explanation": "e"}),
        (["factual-consistency"], '{"label": "Neutral", "explanation": "e"}', {"label": "Neutral", "explanation": "e"}),
        (["personality", "--trait", "openness"], "<rate>High</rate> <justification>j</justification>", {"rate": "High", "justification": "j"}),
        (["atomic-item"], "Atomic Question: Where?\nAtomic Answer: Lyon\n", {"question": "Where?", "answer": "Lyon"}),
        (["mcq-answers", "--options", "3", "--items", "2"], "Q1: C\nQ2: A\n", {"answers": ["C", "A"]}),
        (["speaker-attribution"], '{"speakers": [{"item": 1, "role": "other", "reason": "an aide"}]}',
         {"speakers": [{"item": 1, "role": "other", "reason": "an aide"}]}),
        (["transcript-quality"], '{"kind": "interview", "reason": "asked and answered"}',
         {"kind": "interview", "reason": "asked and answered"}),
        (["thematic-tagging"], '{"tags": ["Identity Narrative"]}', {"tags": ["Identity Narrative"]}),
        (["personality-category"], '{"category": "Music", "reason": "a singer"}', {"category": "Music", "reason": "a singer"}),
    ],
)
def test_valid_outputs_print_json(args, stdin, expected) -> None:
    res = _run(args, stdin)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == expected


def test_mcq_generation() -> None:
    item = {"question": "Where?", "options": [{"kind": "correct", "text": "Lyon"}, {"kind": "opposite_negation", "text": "Not Lyon"},
            {"kind": "near_miss", "text": "Lille"}], "correct_answer": "A"}
    args = ["mcq-generation", "--atomic-question", "Where?", "--atomic-answer", "Lyon", "--options", "3"]
    res = _run(args, json.dumps(item))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["options"][1] == {"kind": "opposite_negation", "text": "Not Lyon"}
    assert _run(args[:-1] + ["4"], json.dumps(item)).exit_code == 1


@pytest.mark.parametrize(
    "args, stdin, reason",
    [
        (["content-similarity"], '{"score": true, "explanation": "e"}', "score must be an integer"),
        (["factual-consistency"], '{"label": "neutral", "explanation": "e"}', "label must be one of"),
        (["mcq-answers", "--options", "3", "--items", "2"], "Q1: D\nQ2: A", "not one of the offered labels"),
        (["premise-pass1"], "not json", ""),
        (["premise-pass2"], "{}", ""),
        (["speaker-attribution"], '{"speakers": [{"item": 2, "role": "person", "reason": "r"}]}', "item must be 1"),
        (["transcript-quality"], '{"kind": "Interview", "reason": "r"}', "kind must be one of"),
        (["thematic-tagging"], '{"tags": ["Politics"]}', "must be one of"),
        (["personality-category"], '{"category": "Music", "reason": " "}', "reason must not be blank"),
    ],
)
def test_breaches_exit_1_with_the_reason_on_stderr(args, stdin, reason) -> None:
    res = _run(args, stdin)
    assert res.exit_code == 1
    assert res.stdout == ""
    assert reason in res.stderr and res.stderr.strip()


@pytest.mark.parametrize(
    "args",
    [
        ["personality"],
        ["personality", "--trait", "Openness"],
        ["mcq-answers", "--options", "5", "--items", "2"],
        ["mcq-answers", "--options", "3"],
        ["mcq-generation", "--options", "3", "--atomic-question", "q"],
    ],
)
def test_missing_options_are_usage_errors(args) -> None:
    res = _run(args, "x")
    assert res.exit_code == 2 and "usage:" in res.stderr
