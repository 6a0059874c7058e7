"""The curation review pages (issue 31, step 6) through Starlette's test client, over a small corpus
curated offline: the list with the retention rate, a transcript's verdict beside its attributed turns
and pairs, decisions written through core's review.py (atomic, replaced), honoured by a re-run,
and a folder without curation output refused with a message."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from interviewsim_core.curation import review
from interviewsim_core.curation.review import load_review, read_decisions
from interviewsim_view import urls
from interviewsim_view.app import ViewConfig, create_app

from .curated import EMPTY, MONOLOGUE, PEOPLE, build_curated, curate_cli


@pytest.fixture(scope="module")
def curated(tmp_path_factory):
    return build_curated(tmp_path_factory.mktemp("curated"))


@pytest.fixture()
def corpus(curated, tmp_path):
    """A copy of the curated corpus folder per test (decisions change it)."""
    out = tmp_path / "corpus"
    shutil.copytree(curated[2], out)
    return out


def client(corpus, data_root=None) -> TestClient:
    return TestClient(create_app(ViewConfig(data_root=data_root, corpus=corpus)))


def retention(page: str) -> tuple[int, int]:
    m = re.search(r'id="retention" data-kept="(\d+)" data-total="(\d+)"', page)
    assert m, page[:2000]
    return int(m[1]), int(m[2])


def row_of(page: str, file: str) -> str:
    m = re.search(rf'<tr data-file="{re.escape(file)}".*?</tr>', page, re.S)
    assert m, file
    return m[0]


def test_the_list_shows_every_transcript_and_the_retention(corpus):
    c = client(corpus)
    assert c.get("/", follow_redirects=False).headers["location"] == urls.curation()
    page = c.get(urls.curation()).text
    report = json.loads((corpus / "curation_report.json").read_text())
    assert page.count("<tr data-file=") == len(report["transcripts"]) == 10
    assert retention(page) == (8, 10) and "80.0%" in page and "73.5%" in page  # the monologue and the empty file
    assert 'data-kept="no"' in row_of(page, MONOLOGUE) and "scripted_monologue" in row_of(page, MONOLOGUE)
    assert ">refused<" in row_of(page, EMPTY) and "empty-file" in page  # a file that cannot be read: refused, its reason shown
    assert "interview" in row_of(page, f"{PEOPLE[0]}/AUL-2005-kelsing-tribune.txt")
    # Issue 45: it said "(cached: no model call)" while the re-curation then planned 199 calls; what a
    # re-curation calls is the plan's to say (`interviewsim curate` prints it), so the page says nothing of it.
    assert "no model call" not in page and "cached" not in page


def test_a_transcript_shows_the_verdict_the_attributed_turns_and_the_pairs(corpus):
    c = client(corpus)
    prov = json.loads((corpus / PEOPLE[0] / "provenance.json").read_text())
    entry = next(t for t in prov["transcripts"] if t["format"] == "vtt")
    page = c.get(urls.curation_transcript(entry["file"])).text
    assert entry["reason"] in page and 'id="quality-kind">interview<' in page
    assert page.count('<tr data-role="') == len(entry["turns"])
    roles = re.findall(r'<tr data-role="(\w+)"', page)
    assert set(roles) == {"interviewer", "person"} and "a questioner&#39;s label" in page
    doc = json.loads((corpus / PEOPLE[0] / "prepared_input.json").read_text())
    qa = next(i["qa_pairs"] for i in doc["interviews"] if i["interview_id"] == entry["interview_id"])
    assert re.findall(r'class="card pair" data-qa="([^"]+)"', page) == [p["qa_id"] for p in qa]
    first = entry["raw_spans"][0]
    assert f'data-pair="{qa[0]["qa_id"]}"' in page and roles[first["question_turn"]] == "interviewer"
    assert all(roles[i] == "person" for i in first["response_turns"])
    refused = c.get(urls.curation_transcript(EMPTY)).text
    assert 'id="no-turns"' in refused and "empty-file" in refused
    assert c.get(urls.curation_transcript("no/such.txt")).status_code == 404


def test_a_decision_is_written_atomically_replaced_and_shown(corpus, monkeypatch):
    writes = []
    real = review.atomic_write
    monkeypatch.setattr(review, "atomic_write", lambda path, fn: writes.append(path) or real(path, fn))
    c = client(corpus)
    file = f"{PEOPLE[0]}/AUL-2005-kelsing-tribune.txt"
    r = c.post("/curation/decision", data={"file": file, "decision": "reject", "check": "identity",
                                           "reason": "the speaker is  his coach"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == urls.curation_transcript(file, saved="reject")
    assert writes == [corpus / "review.csv"] and sorted(p.name for p in corpus.iterdir() if "review" in p.name) == ["review.csv"]
    assert read_decisions(corpus) == ({file: ("reject", "identity: the speaker is his coach")}, [])
    page = c.get(urls.curation()).text
    assert retention(page) == (7, 10) and "pending" in row_of(page, file) and 'data-kept="no"' in row_of(page, file)
    # a second decision on the same transcript replaces the first (review.py: one row per file)
    c.post("/curation/decision", data={"file": file, "decision": "accept", "check": "", "reason": ""})
    assert read_decisions(corpus)[0] == {file: ("accept", "passes the checks: identity, conversational format, content quality")}
    assert (corpus / "review.csv").read_text().count("\n") == 2
    assert retention(c.get(urls.curation()).text) == (8, 10)
    # refused, each with its reason, and nothing written
    before = (corpus / "review.csv").read_bytes()
    for data, status in (({"file": file, "decision": "reject", "check": "", "reason": "no check named"}, 400),
                         ({"file": file, "decision": "reject", "check": "looks", "reason": "x"}, 400),
                         ({"file": file, "decision": "maybe", "check": "identity", "reason": "x"}, 400),
                         ({"file": "no/such.txt", "decision": "reject", "check": "identity", "reason": "x"}, 404)):
        r = c.post("/curation/decision", data=data)
        assert r.status_code == status, r.text[-300:]
        assert ("decision not recorded" if status == 400 else "no transcript") in r.text
    r = c.post("/curation/decision", data={"file": file, "decision": "reject", "check": "identity", "reason": "x"},
               headers={"origin": "http://elsewhere.example"})
    assert r.status_code == 403
    assert (corpus / "review.csv").read_bytes() == before


def test_a_rerun_honours_the_decisions_and_the_list_follows(curated, corpus):
    raw, manifest, _ = curated
    c = client(corpus)
    file = f"{PEOPLE[1]}/FNW-2016-harvest-tech-roundup.vtt"
    c.post("/curation/decision", data={"file": file, "decision": "reject", "check": "content quality",
                                       "reason": "a product announcement read out"})
    c.post("/curation/decision", data={"file": MONOLOGUE, "decision": "accept", "check": "", "reason": "a statement"})
    interviews = len(json.loads((corpus / PEOPLE[1] / "prepared_input.json").read_text())["interviews"])
    report = curate_cli(raw, manifest, corpus)
    state = load_review(corpus)
    assert state.pending == 0 and not state.row(file).kept_last and state.row(MONOLOGUE).kept_last
    assert sum(r["kept"] for r in report["transcripts"]) == state.kept == 8  # what `curate` prints as retention
    assert len(json.loads((corpus / PEOPLE[1] / "prepared_input.json").read_text())["interviews"]) == interviews - 1
    page = c.get(urls.curation()).text
    assert retention(page) == (8, 10) and "pending" not in row_of(page, file)
    assert "quality control: interview" in next(r["reason"] for r in report["transcripts"] if r["file"] == file)


def test_a_folder_without_curation_output_gets_a_message(tmp_path, corpus):
    empty = tmp_path / "not_curated"
    empty.mkdir()
    for c in (client(empty), client(None, data_root=str(tmp_path))):
        r = c.get(urls.curation())
        assert r.status_code == 409 and ("no curation_report.json" in r.text or "--corpus" in r.text), r.text[-400:]
    assert client(corpus, data_root=str(tmp_path)).get(urls.curation()).status_code == 200  # beside a data root
    report = json.loads((corpus / "curation_report.json").read_text())
    for row in report["transcripts"]:
        del row["quality_kind"]  # as curated before quality control's verdict was kept apart from reviews
    (corpus / "curation_report.json").write_text(json.dumps(report))
    r = client(corpus).get(urls.curation())
    assert r.status_code == 409 and "re-run" in r.text and "older curation" in r.text

    from interviewsim_cli import app

    res = CliRunner().invoke(app, ["view", "--corpus", str(empty)])
    assert res.exit_code == 2 and "no curation_report.json" in res.output
    res = CliRunner().invoke(app, ["view"])
    assert res.exit_code == 2 and "--corpus" in res.output


def test_view_config_opens_the_runs_own_folders_and_flags_win(curated, corpus, tmp_path, monkeypatch):
    """``view --config`` serves the config's data root and, because it curates, its corpus' review pages;
    ``--corpus`` beside it wins; a config that does not curate gives no review pages (its corpus is input)."""
    import uvicorn

    from interviewsim_cli import app

    raw, manifest, _ = curated
    served = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: served.append(application))
    data_root = tmp_path / "data_out"
    data_root.mkdir()
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"data_root: {data_root}\ntranscripts: {raw}\nmanifest: {manifest}\ncorpus: {corpus}\n")
    res = CliRunner().invoke(app, ["view", "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    assert f"curation review of {corpus}" in res.output and str(data_root) in res.output
    assert TestClient(served[-1]).get(urls.curation()).status_code == 200

    empty = tmp_path / "not_curated"
    empty.mkdir()
    res = CliRunner().invoke(app, ["view", "--config", str(cfg), "--corpus", str(empty)])
    assert res.exit_code == 2 and "no curation_report.json" in res.output  # the flag won

    plain = tmp_path / "plain.yaml"
    plain.write_text(f"data_root: {data_root}\ncorpus: {corpus}\n")
    res = CliRunner().invoke(app, ["view", "--config", str(plain)])
    assert res.exit_code == 0 and "curation review" not in res.output, res.output
    assert TestClient(served[-1]).get(urls.curation()).status_code == 409
