"""Manifest problems listed at once (file + row + rule); the corpus writer: valid documents, provenance,
refusals that touch only their own personality, the split's minimum reported."""

from __future__ import annotations

import csv
import hashlib
import json
import os

from typer.testing import CliRunner

from interviewsim_core.curation import attribution
from interviewsim_core.curation.ingest import ingest_file
from interviewsim_core.curation.manifest import read_manifest
from interviewsim_core.curation.models import ManifestRow
from interviewsim_core.curation.review import record_decision
from interviewsim_core.curation.run import curate
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.loader import load_document, validate_paths

from curation_fixtures import FORMATS, PERSON, write_manifest

OFFLINE = ModelConfig(model="offline/extractive")


def _folder(tmp_path):
    d = tmp_path / "tx"
    d.mkdir()
    for fmt, (name, render) in FORMATS.items():
        (d / name).write_text(render(), encoding="utf-8")
    (d / "profile.txt").write_text("A sailor and writer.", encoding="utf-8")
    return d


def _rows(pid="P", person=PERSON):
    return [{"file": name, "personality_id": pid, "person_name": person, "date": f"202{i}-01-01",
             "profile_file": "profile.txt", "long_profile_file": "profile.txt"}
            for i, (name, _r) in enumerate(FORMATS.values())]


def test_every_manifest_problem_is_listed_at_once(tmp_path) -> None:
    d = _folder(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_text("Q. hi?\n", encoding="utf-8")
    os.symlink(outside, d / "link.txt")
    rows = [
        {"file": "dialogue.txt", "personality_id": "P", "person_name": PERSON, "date": "2020-01-01"},
        {"file": "dialogue.txt", "personality_id": "P", "person_name": PERSON, "date": "2020-02-01"},
        {"file": "missing.txt", "personality_id": "P", "person_name": PERSON, "date": "2020-13-01"},
        {"file": "link.txt", "personality_id": "Q", "person_name": "X", "date": "2020-01-01"},
        {"file": "dialogue.vtt", "personality_id": "R", "person": "X", "date": "2020-01-01"},
    ]
    m = read_manifest(write_manifest(tmp_path / "m.json", rows), d)
    got = sorted((p.path, p.rule) for p in m.problems)
    assert got == [("row 2", "duplicate-row"), ("row 3", "bad-date"), ("row 3", "missing-file"),
                   ("row 4", "outside-folder"), ("row 5", "missing-field"), ("row 5", "unknown-field")]
    assert m.with_problems == {"P", "Q", "R"}
    assert [r.file for r in m.rows] == ["dialogue.txt"]
    assert any("no profile_file" in w for w in m.warnings)


def test_csv_manifest_with_aliases(tmp_path) -> None:
    d = _folder(tmp_path)
    path = tmp_path / "m.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["file", "personality_id", "person_name", "date", "aliases", "title",
                                           "addressed_as"])
        w.writeheader()
        w.writerow({"file": "dialogue.txt", "personality_id": "P", "person_name": PERSON, "date": "2020-01-01",
                    "aliases": "Captain Voss; M. Voss", "title": "Harbour interview", "addressed_as": "The Captain; Skipper"})
    m = read_manifest(path, d)
    assert m.problems == [] and m.rows[0].aliases == ("Captain Voss", "M. Voss")
    assert m.rows[0].title == "Harbour interview" and m.rows[0].addressed_as == ("The Captain", "Skipper")
    names = attribution.person_names(m.rows[0])
    assert {"captain", "the captain", "skipper", "the skipper"} <= names and "harbour interview" not in names


def test_corpus_is_valid_with_provenance_and_categories(tmp_path, runner) -> None:
    d = _folder(tmp_path)
    out = tmp_path / "corpus"
    m = write_manifest(tmp_path / "m.json", _rows())
    outcome = curate(d, m, runner, OFFLINE, out=out)
    assert outcome.problems == [] and list(outcome.written) == ["P"]
    assert validate_paths([out]) == []
    doc = load_document(out / "P" / "prepared_input.json")
    assert [i.sequence for i in doc.interviews] == [0, 1, 2, 3]
    assert doc.personality.profile == "A sailor and writer."
    assert all(len(p.tags) == 1 for i in doc.interviews for p in i.qa_pairs)
    assert PERSON not in (out / "P" / "prepared_input.json").read_text()
    prov = json.loads((out / "P" / "provenance.json").read_text())
    assert prov["person_name"] == PERSON
    first = prov["transcripts"][0]
    assert first["sha256"] == hashlib.sha256((d / first["file"]).read_bytes()).hexdigest()
    assert prov["steps"]["qa_tags"]["prompt_version"] == "1+1" and prov["steps"]["qa_tags"]["model"] == "offline/extractive"
    assert (out / "categories.csv").read_text().splitlines()[1].startswith("P,")
    assert json.loads((out / "curation_report.json").read_text())["transcripts"][0]["kept"] is True


def test_a_bad_personality_is_refused_and_the_others_written(tmp_path, runner) -> None:
    d = _folder(tmp_path)
    (d / "empty.txt").write_bytes(b"")
    (d / "silent.txt").write_text("INTERVIEWER: Are you there?\n\nSOMEONE ELSE: No.\n", encoding="utf-8")
    rows = _rows() + [
        {"file": "empty.txt", "personality_id": "B", "person_name": "Bo", "date": "2020-01-01"},
        {"file": "dialogue.txt", "personality_id": "ONE", "person_name": PERSON, "date": "2020-01-01"},
    ]
    rows = [r for r in rows if not (r["personality_id"] == "P" and r["file"] == "dialogue.txt")]
    out = tmp_path / "corpus"
    outcome = curate(d, write_manifest(tmp_path / "m.json", rows), runner, OFFLINE, out=out)
    assert sorted(outcome.written) == ["P"]
    assert [p.rule for p in outcome.problems] == ["empty-file"]
    assert "B" in outcome.refused and not (out / "B").exists()
    assert "chronological split needs 2" in outcome.refused["ONE"][0] and not (out / "ONE").exists()


def test_a_transcript_where_the_person_never_speaks_is_excluded_and_its_personality_goes_on(tmp_path, runner) -> None:
    d = _folder(tmp_path)
    (d / "a.txt").write_text("INTERVIEWER: Are you there?\n\nSOMEONE ELSE: No.\n\nINTERVIEWER: Anyone?\n\n"
                             "SOMEONE ELSE: Still no.\n", encoding="utf-8")
    (d / "prose.txt").write_text("An essay about the person, with no speaker at all.\n", encoding="utf-8")
    rows = _rows() + [{"file": f, "personality_id": "P", "person_name": PERSON, "date": "2021-01-01"}
                      for f in ("a.txt", "prose.txt")]
    outcome = curate(d, write_manifest(tmp_path / "m.json", rows), runner, OFFLINE, out=tmp_path / "corpus")
    assert outcome.problems == [] and "P" in outcome.written
    why = {r["file"]: (r["kept"], r["kind"], r["quality_kind"]) for r in outcome.table()}
    assert why["a.txt"] == (False, "person-never-speaks", "person-never-speaks")
    assert why["prose.txt"] == (False, "not-a-dialogue", "not-a-dialogue")
    report = json.loads((tmp_path / "corpus" / "curation_report.json").read_text())
    assert report["personalities"]["P"]["excluded"] == {"not-a-dialogue": 1, "person-never-speaks": 1}


def test_a_file_that_cannot_be_read_is_refused_alone_and_its_personality_goes_on(tmp_path, runner) -> None:
    d = _folder(tmp_path)
    (d / "bin.txt").write_bytes(b"PK\x03\x04\x00\x00binary")
    rows = _rows() + [{"file": "bin.txt", "personality_id": "P", "person_name": PERSON, "date": "2021-01-01"},
                      {"file": "gone.txt", "personality_id": "P", "person_name": PERSON, "date": "2021-02-01"}]
    outcome = curate(d, write_manifest(tmp_path / "m.json", rows), runner, OFFLINE, out=tmp_path / "corpus")
    assert sorted((p.file.rsplit("/", 1)[-1], p.path, p.rule) for p in outcome.problems) == [
        ("bin.txt", "$", "binary-file"), ("gone.txt", "row " + str(len(rows)), "missing-file")]
    assert "P" in outcome.written and {r["file"]: r["kind"] for r in outcome.table()}["bin.txt"] == "refused"


def test_a_reviewer_who_accepts_a_transcript_without_the_person_names_the_answerer(tmp_path, runner) -> None:
    d = _folder(tmp_path)
    (d / "a.txt").write_text("Q: What happened in the spring?\n\nTHE CHAIR: We rebuilt the old mill by the river.\n\n"
                             "Q: And what came after that?\n\nTHE CHAIR: We opened it to the public in the summer.\n",
                             encoding="utf-8")
    rows = _rows() + [{"file": "a.txt", "personality_id": "P", "person_name": PERSON, "date": "2021-01-01"}]
    manifest, out = write_manifest(tmp_path / "m.json", rows), tmp_path / "corpus"
    real = ModelConfig(model="openai/stand-in")  # a builder that is not offline: no answerer rule of its own
    t, row = ingest_file(d, "a.txt")[0], ManifestRow(**rows[-1])
    assert "THE CHAIR" not in attribution.rule_pass(t, row, real)[0]  # left to the model
    placed = attribution.rule_pass(t, row, real, accepted=True)[0]
    assert placed["THE CHAIR"].role == "person" and placed["THE CHAIR"].decided_by == "review"
    record_decision(out, "a.txt", "accept", "identity: the chair is the person")
    outcome = curate(d, manifest, runner, OFFLINE, out=out)
    row = {r["file"]: r for r in outcome.table()}["a.txt"]
    assert row["kept"] and row["pairs"] == 2


def test_cli_curates_offline_and_a_rerun_makes_no_new_call(tmp_path) -> None:
    from interviewsim_cli import app

    d = _folder(tmp_path)
    m = write_manifest(tmp_path / "m.json", _rows())
    out = tmp_path / "corpus"
    res = CliRunner().invoke(app, ["curate", "--transcripts", str(d), "--manifest", str(m), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["written"] and report["model_calls"] > 0
    assert validate_paths([out]) == []
    from interviewsim_core.factories import gateway_at

    with gateway_at(out / ".curation_cache.sqlite") as gw:
        again = curate(d, m, gw, OFFLINE)
        assert gw.stats.calls_made == 0 and gw.stats.cache_hits + gw.stats.deduplicated == report["model_calls"]
    assert again.documents["P"] == json.loads((out / "P" / "prepared_input.json").read_text())


def test_a_rerun_honours_the_reviewers_decisions(tmp_path, runner) -> None:
    from interviewsim_core.curation.review import read_decisions, record_decision

    d = _folder(tmp_path)
    m = write_manifest(tmp_path / "m.json", _rows())
    out = tmp_path / "corpus"
    first = curate(d, m, runner, OFFLINE, out=out)
    assert len(first.documents["P"]["interviews"]) == 4
    record_decision(out, "dialogue.vtt", "reject", "captions of a different event")
    record_decision(out, "dialogue.vtt", "reject", "captions of another event")  # replaced, not duplicated
    assert read_decisions(out)[0] == {"dialogue.vtt": ("reject", "captions of another event")}
    again = curate(d, m, runner, OFFLINE, out=out)
    assert len(again.documents["P"]["interviews"]) == 3
    row = next(r for r in again.table() if r["file"] == "dialogue.vtt")
    assert row["kept"] is False and "rejected by a reviewer: captions of another event" in row["reason"]
    (out / "review.csv").write_text("file,decision,reason\ndialogue.vtt,maybe,x\n", encoding="utf-8")
    assert [p.rule for p in read_decisions(out)[1]] == ["review-decision"]
