"""The 353 real transcripts of ../shared/data/raw_transcripts_1960_1980/, offline: every file ingested or
refused with a reason; the whole curation compared with ../shared/data/press_conferences_1960_1980/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interviewsim_core.curation.compare import compare_corpora, format_table, shared_manifest_rows
from interviewsim_core.curation.attribution import rule_pass
from interviewsim_core.curation.ingest import ingest_file
from interviewsim_core.curation.models import ManifestRow
from interviewsim_core.curation.run import curate
from interviewsim_core.llm.types import ModelConfig

from curation_fixtures import write_manifest

_REPO = Path(__file__).resolve().parents[3]
_CANDIDATES = [_REPO.parent / "shared" / "data", _REPO.parent.parent / "shared" / "data"]
DATA = next((c for c in _CANDIDATES if (c / "raw_transcripts_1960_1980").is_dir()), _CANDIDATES[0])
RAW = DATA / "raw_transcripts_1960_1980"
REF = DATA / "press_conferences_1960_1980"

OFFLINE = ModelConfig(model="offline/extractive")

pytestmark = pytest.mark.skipif(not RAW.is_dir() or not REF.is_dir(),
                                reason=f"shared data not found beside the repo (looked in {[str(c) for c in _CANDIDATES]})")


def test_every_real_transcript_is_ingested_and_the_rule_finds_the_person_in_nearly_all(capsys) -> None:
    """The manifest a user writes from the folder's own manifest.json (``title`` is "News conference", no
    ``addressed_as``): the name rules and, offline, the answerer rule find the president in nearly every file."""
    rows = shared_manifest_rows(RAW)
    assert len(rows) == 353 and {r["title"] for r in rows} == {"News conference"}
    found = 0
    for row in rows:
        t, problems = ingest_file(RAW, row["file"])
        assert t is not None and problems == [] and t.format == "text", row["file"]
        placed, _items = rule_pass(t, ManifestRow(**row), OFFLINE)
        found += any(a.role == "person" for a in placed.values())
    print(f"the person placed before any call in {found} of {len(rows)} transcripts")
    assert found / len(rows) >= 0.9


def test_curation_matches_the_reference_and_no_response_holds_an_interviewers_words(tmp_path, runner) -> None:
    manifest = write_manifest(tmp_path / "m.json", shared_manifest_rows(RAW))
    out = curate(RAW, manifest, runner, OFFLINE)
    assert out.problems == [] and len(out.documents) == 6
    rows = compare_corpora(out.documents, REF, out.excluded())
    print(format_table(rows))
    assert any("excluded as group_discussion" in why for r in rows for why in r.reasons)
    matched, ref = sum(r.matched for r in rows), sum(r.reference for r in rows)
    found = sum(r.found for r in rows)
    assert matched / ref >= 0.9 and found / ref >= 0.9  # measured 6,122 matched, 6,132 found of 6,359 (96.3%)
    for pid, items in out.transcripts.items():
        for c in items:
            labels = {t.label for t, role in zip(c.transcript.turns, c.roles) if role != "person" and t.label}
            for p in c.pairs:
                assert all(c.roles[i] == "person" for i in p.response_turns)
                asked = [c.transcript.turns[i].text for i, r in enumerate(c.roles) if r == "interviewer" and "?" in c.transcript.turns[i].text]
                assert not any(a in p.raw_response for a in asked), (c.row.file, p.question)
                assert not any(p.raw_response.startswith(f"{lab}.") for lab in labels)
