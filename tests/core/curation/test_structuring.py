"""One dialogue as plain text, WebVTT, SRT and diarised JSON gives the same pairs; responses never
hold an interviewer's words; the QA rule's edge cases."""

from __future__ import annotations

import pytest

from interviewsim_core.curation.run import curate
from interviewsim_core.curation.structuring import normalise, structure
from interviewsim_core.curation.ingest import ingest_bytes
from interviewsim_core.llm.types import ModelConfig

from curation_fixtures import DIALOGUE, FORMATS, PERSON, write_manifest

OFFLINE = ModelConfig(model="offline/extractive")


def _pairs_for(tmp_path, fmt: str, runner):
    name, render = FORMATS[fmt]
    (tmp_path / name).write_text(render(), encoding="utf-8")
    (tmp_path / "later.txt").write_text(FORMATS["text"][1](), encoding="utf-8")
    m = write_manifest(tmp_path / "m.json", [
        {"file": name, "personality_id": "P", "person_name": PERSON, "date": "2020-01-01"},
        {"file": "later.txt", "personality_id": "P", "person_name": PERSON, "date": "2021-01-01"}])
    outcome = curate(tmp_path, m, runner, OFFLINE)
    assert outcome.problems == [] and outcome.refused == {}
    item = next(c for c in outcome.transcripts["P"] if c.row.file == name)
    return item


def test_the_four_formats_give_the_same_pairs(tmp_path, runner) -> None:
    got = {}
    for fmt in FORMATS:
        d = tmp_path / fmt
        d.mkdir()
        item = _pairs_for(d, fmt, runner)
        got[fmt] = [(p.question, p.response) for p in item.pairs]
    assert got["text"] == [
        ("What made you start sailing alone across the ocean?",
         "I grew up by the harbour and the boats were always calling me out. My father built the first one with his own hands in our garden."),
        ("Were you ever afraid out there at night?", "afraid, yes, but the fear kept me careful and awake."),
        ("And what comes next for you after this long voyage?", "A book about the crossing and then a quiet winter at home.")]
    for fmt in FORMATS:
        assert got[fmt] == got["text"], fmt


def test_diarised_ids_are_placed_by_the_model_and_names_by_the_rule(tmp_path, runner) -> None:
    d = tmp_path / "j"
    d.mkdir()
    item = _pairs_for(d, "diarised_json", runner)
    assert {k: (a.role, a.decided_by) for k, a in item.attributions.items()} == {
        "SPEAKER_00": ("interviewer", "model"), "SPEAKER_01": ("person", "model")}
    d = tmp_path / "t"
    d.mkdir()
    item = _pairs_for(d, "text", runner)
    assert {k: (a.role, a.decided_by) for k, a in item.attributions.items()} == {
        "Interviewer": ("interviewer", "rule"), PERSON.upper(): ("person", "rule")}


def test_no_response_holds_an_interviewers_words(tmp_path, runner) -> None:
    for fmt in FORMATS:
        d = tmp_path / fmt
        d.mkdir()
        item = _pairs_for(d, fmt, runner)
        asked = [text for who, text in DIALOGUE if who != PERSON]
        for p in item.pairs:
            assert all(a not in p.response for a in asked)
            assert all(item.roles[i] == "person" for i in p.response_turns)
            assert "Interviewer" not in p.response


def test_raw_span_is_kept_beside_the_normalised_text() -> None:
    t, _ = ingest_bytes(b"Q. Was it, uh, hard?\n\nTHE PRESIDENT. Um, I I think it was, er, hard enough.\n", "x.txt")
    pairs, stats = structure(t, ["interviewer", "person"])
    assert pairs[0].raw_response == "Um, I I think it was, er, hard enough."
    assert pairs[0].response == "I think it was, hard enough."
    assert pairs[0].question == "Was it, hard?"
    assert stats["questions"] == 1


@pytest.mark.parametrize("roles, n_pairs, key, count", [
    (["person", "interviewer", "person"], 1, "person_turns_outside_pairs", 1),  # an opening statement
    (["interviewer", "interviewer", "person"], 1, "unanswered", 1),            # the first question unanswered
    (["interviewer", "other", "person"], 0, "unanswered", 1),                  # someone else answered
])
def test_pairing_rule(roles, n_pairs, key, count) -> None:
    texts = {"person": "THE PRESIDENT. I say this at length.", "interviewer": "Q. What do you say here?",
             "other": "SECRETARY JONES. I will take that one."}
    body = "\n\n".join(texts[r] for r in roles).encode()
    t, _ = ingest_bytes(body, "x.txt")
    pairs, stats = structure(t, roles)
    assert len(pairs) == n_pairs and stats[key] == count


def test_normalise_keeps_words() -> None:
    assert normalise("Well, uh, that that is the the point.") == "Well, that that is the point."
    assert normalise("Umbrella and error stay.") == "Umbrella and error stay."
