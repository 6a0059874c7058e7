"""A small curated corpus for the curation review pages, made offline by the tests: two sample
personalities (four transcripts each, one per format), a scripted monologue quality control
excludes, and a personality refused for an empty file; curated with ``interviewsim curate`` (the
offline model through the gateway, as a researcher runs it)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from interviewsim_core.curation.sample_transcripts import write_sample_transcripts

PEOPLE = ("SYN_AUERLUND", "SYN_FENWRIGHT")
MONOLOGUE = "SYN_AUERLUND/statement.txt"
EMPTY = "EMPTY/empty.txt"


def curate_cli(raw: Path, manifest: Path, out: Path) -> dict:
    """``interviewsim curate --json``; returns the curation report it printed."""
    from interviewsim_cli import app

    res = CliRunner().invoke(app, ["curate", "--transcripts", str(raw), "--manifest", str(manifest), "--out", str(out),
                                   "--json"])
    assert res.exit_code in (0, 1), res.output  # 1: the empty file is a problem, refusing only its personality
    return json.loads(res.stdout[: res.stdout.rindex("}") + 1])


def build_curated(tmp: Path) -> tuple[Path, Path, Path]:
    """(transcripts folder, manifest, corpus folder) of a fresh curation."""
    raw = tmp / "raw"
    rows = json.loads(write_sample_transcripts(raw).read_text(encoding="utf-8"))
    keep = [r for pid in PEOPLE for r in [r for r in rows if r["personality_id"] == pid][:4]]
    (raw / MONOLOGUE).write_text(
        "PREPARED STATEMENT\n\nBENEDIKT AUERLUND: I have asked you here to read a short statement about the club. "
        "We are moving to a new hall in the spring, and I want to thank every member who helped with the move, "
        "the volunteers, the parents and the players themselves. That is all I wish to say today.\n", encoding="utf-8")
    (raw / "EMPTY").mkdir()
    (raw / EMPTY).write_bytes(b"")
    keep += [{**keep[0], "file": MONOLOGUE, "date": "2001-06-01"},
             {"file": EMPTY, "personality_id": "EMPTY", "person_name": "Nobody Here", "date": "2001-01-01"}]
    manifest = tmp / "manifest.json"
    manifest.write_text(json.dumps(keep, indent=1), encoding="utf-8")
    out = tmp / "corpus"
    curate_cli(raw, manifest, out)
    return raw, manifest, out
