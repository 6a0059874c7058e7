"""Conclusions from artifacts and from users: statement split, windows, JSONL validation."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from premise_fakes import tiny_split

from interviewsim_core.errors import InputValidationError
from interviewsim_core.premise.conclusions import (
    NO_DATES_NOTE,
    atomic_claim,
    atomic_item_conclusions,
    fact_summary_conclusions,
    load_user_conclusions,
    split_statements,
)

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("He won. She lost.", ["He won.", "She lost."]),
        ("Mr. Smith moved to the U.S. in 1960. He stayed.", ["Mr. Smith moved to the U.S. in 1960.", "He stayed."]),
        ("Dr. J. F. Kennedy spoke on Jan. 5, 1961 about taxes.", ["Dr. J. F. Kennedy spoke on Jan. 5, 1961 about taxes."]),
        ("It grew 3.5 percent. Then it fell!", ["It grew 3.5 percent.", "Then it fell!"]),
        ("Is it true? Yes, e.g. in Ohio.", ["Is it true?", "Yes, e.g. in Ohio."]),
        ('He said "no." Then he left.', ['He said "no."', "Then he left."]),
        ("- likes tennis\n- lives in Boston. Grew up in Maine\n\n", ["likes tennis", "lives in Boston.", "Grew up in Maine"]),
        ("1. First fact.\n2) Second fact.", ["First fact.", "Second fact."]),
        ("   \n...\n", []),
    ],
)
def test_split_statements(text, expected):
    assert split_statements(text) == expected


def test_fact_summary_conclusions_window_is_the_heldout_responses_with_interview_times():
    split = tiny_split()
    fs = pd.DataFrame([
        {"personality_id": "P1", "summary": "He won. She lost.", "explanation": "e", "source_qa_ids": ["Q5b"], "status": "ok"},
        {"personality_id": "P2", "summary": "Other.", "explanation": "e", "source_qa_ids": [], "status": "ok"},
    ])
    out = fact_summary_conclusions(split, fs)
    assert [c.conclusion for c in out] == ["He won.", "She lost."]
    assert [c.conclusion_id for c in out] == ["P1:fact_summary:001", "P1:fact_summary:002"]
    c = out[0]
    assert c.peer_id == "P1" and c.personality_id == "P1" and c.artifact_kind == "fact_summary"
    assert c.window_note == NO_DATES_NOTE
    assert [(m.speaker, m.time, m.text) for m in c.window] == [
        ("P1", "interview I5, sequence 5", "Answer 5b about tennis."),
    ]


def test_fact_summary_without_source_ids_uses_every_heldout_response():
    split = tiny_split()
    fs = pd.DataFrame([{"personality_id": "P1", "summary": "A.", "explanation": "e"}])
    (c,) = fact_summary_conclusions(split, fs)
    assert [m.text for m in c.window] == [p.response for p in split.test_pairs]


def test_fact_summary_window_is_exactly_what_the_builder_was_given():
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.references import plan_fact_summary

    split = tiny_split()
    (planned,) = plan_fact_summary(split, ModelConfig(model="offline/builder"))
    prompt = "\n".join(m["content"] for m in planned.request.messages)
    fs = pd.DataFrame([{"personality_id": "P1", "summary": "He won.", "explanation": "e", "status": "ok",
                        "source_qa_ids": planned.row["source_qa_ids"]}])
    (c,) = fact_summary_conclusions(split, fs)
    assert all(m.text in prompt for m in c.window)
    assert len(c.window) == len(planned.row["source_qa_ids"])
    assert all(p.question not in prompt for p in split.test_pairs)  # the builder saw no question ...
    assert all(m.speaker == "P1" for m in c.window)  # ... so neither does the window


def test_atomic_item_claim_and_window():
    split = tiny_split()
    ai = pd.DataFrame([{"personality_id": "P1", "qa_id": "Q2a", "atomic_question": " Which city? ",
                        "atomic_answer": "Boston.", "status": "ok"}])
    (c,) = atomic_item_conclusions(split, ai)
    assert c.conclusion == atomic_claim("Which city?", "Boston") == 'The answer to the question "Which city?" is "Boston".'
    assert c.conclusion_id == "P1:atomic_item:Q2a"
    assert [m.text for m in c.window] == ["Question 2a?", "Answer 2a about Boston."]
    bad = ai.assign(qa_id="nope")
    with pytest.raises(ValueError, match="not in the split"):
        atomic_item_conclusions(split, bad)


def _line(**over):
    rec = {"conclusion": "alice went to Paris", "peer_id": "alice",
           "window": [{"speaker": "alice", "time": "2026-07-02T10:00Z", "text": "I went to Paris"}],
           "conclusion_id": "c1"}
    rec.update(over)
    return json.dumps(rec)


def test_load_user_conclusions_valid(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(_line() + "\n\n" + _line(conclusion_id="c2", peer_id="bob") + "\n", encoding="utf-8")
    out = load_user_conclusions(p)
    assert [c.conclusion_id for c in out] == ["c1", "c2"]
    assert out[1].peer_id == out[1].personality_id == "bob" and out[1].artifact_kind == "user"
    assert out[0].window[0].time == "2026-07-02T10:00Z" and out[0].window_note is None


def test_load_user_conclusions_lists_every_problem_with_line_numbers(tmp_path):
    lines = [
        _line(),                                                    # 1 ok
        "{not json",                                                # 2
        '{"conclusion": "a", "conclusion": "b"}',                   # 3 duplicate key
        _line(conclusion_id="c1"),                                  # 4 duplicate id
        _line(conclusion_id="c4", extra=1),                         # 5 unknown field
        json.dumps({"conclusion": "x", "peer_id": "p", "conclusion_id": "c5"}),  # 6 missing window
        _line(conclusion_id="c6", window=[]),                       # 7 empty window
        _line(conclusion_id="c7", window=[{"speaker": "a", "time": "", "text": "t"}]),  # 8 blank time
        _line(conclusion_id="c8", window=[{"speaker": "a", "text": "t", "when": 1}]),   # 9
        _line(conclusion_id="c9", conclusion=3),                    # 10 wrong type
        "[1, 2]",                                                   # 11 not an object
        _line(conclusion_id=" "),                                   # 12 blank id
    ]
    p = tmp_path / "c.jsonl"
    p.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputValidationError) as ei:
        load_user_conclusions(p)
    got = {(pr.path.split(":")[0], pr.rule) for pr in ei.value.problems}
    assert got == {
        ("line 2", "invalid-json"), ("line 3", "duplicate-key"), ("line 4", "duplicate-id"),
        ("line 5", "unknown-field"), ("line 6", "missing-field"), ("line 7", "empty"), ("line 8", "blank"),
        ("line 9", "missing-field"), ("line 9", "unknown-field"), ("line 10", "wrong-type"),
        ("line 11", "wrong-type"), ("line 12", "blank"),
    }
    assert all(pr.file == str(p) for pr in ei.value.problems)
    assert "line 4: $.conclusion_id" in str(ei.value)


@pytest.mark.parametrize("content, rule", [(b"", "empty"), (b"\xff\xfe", "not-utf8")])
def test_load_user_conclusions_empty_or_undecodable(tmp_path, content, rule):
    p = tmp_path / "c.jsonl"
    p.write_bytes(content)
    with pytest.raises(InputValidationError) as ei:
        load_user_conclusions(p)
    assert [pr.rule for pr in ei.value.problems] == [rule]


def test_missing_file(tmp_path):
    with pytest.raises(InputValidationError, match="not-found"):
        load_user_conclusions(tmp_path / "nope.jsonl")


def test_real_corpus_windows_carry_interview_ids_and_sequences():
    from interviewsim_core.loader import load_corpus
    from interviewsim_core.split import split_personality

    root = DATA / "press_conferences_1960_1980"
    if not root.exists():
        pytest.skip("shared corpus not available")
    split = split_personality(load_corpus(root)[0])
    pid = split.personality_id
    fs = pd.DataFrame([{"personality_id": pid, "summary": "He spoke. He left.", "explanation": "e",
                        "source_qa_ids": [p.qa_id for p in split.test_pairs]}])
    out = fact_summary_conclusions(split, fs)
    assert len(out) == 2 and [m.text for m in out[0].window] == [p.response for p in split.test_pairs]
    assert {m.speaker for m in out[0].window} == {pid}
    by_interview = {p.interview_id: p.sequence for p in split.test_pairs}
    for m in out[0].window:
        iid, seq = m.time.removeprefix("interview ").split(", sequence ")
        assert by_interview[iid] == int(seq)
