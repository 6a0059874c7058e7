"""`interviewsim plan|run --transcripts DIR --manifest FILE`: the curation's calls counted before the first one,
then the graph's curation asset and the evaluation as one action on the instance (issue 31)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from interviewsim_core.pipeline.storage import partition_path

PERSON = "Ada Quill"
DIALOGUE = [
    ("Interviewer", "Welcome, and thank you for coming in to talk with us today."),
    (PERSON, "Thank you, it is good to be back in this studio again."),
    ("Interviewer", "What first drew you to building clocks by hand?"),
    (PERSON, "My grandmother kept a workshop and I spent every summer among her tools."),
    ("Interviewer", "Which clock are you proudest of so far in your career?"),
    (PERSON, "The tower clock in our village, because the whole town hears it every hour."),
    ("Interviewer", "What will you work on this coming winter?"),
    (PERSON, "A small brass clock for my daughter, with a moon that changes each night."),
]


def _transcripts(tmp_path):
    d = tmp_path / "tx"
    d.mkdir()
    rows = []
    for i in range(4):
        text = "\n\n".join(f"{who}: {line}" for who, line in DIALOGUE)
        (d / f"talk{i}.txt").write_text(text + "\n", encoding="utf-8")
        rows.append({"file": f"talk{i}.txt", "personality_id": "ADA", "person_name": PERSON, "date": f"201{i}-05-01"})
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(rows), encoding="utf-8")
    return d, manifest


def test_plan_then_run_curates_then_evaluates_and_a_rerun_curates_from_the_cache(tmp_path, monkeypatch):
    from interviewsim_cli import app

    d, manifest = _transcripts(tmp_path)
    corpus, data = tmp_path / "corpus", tmp_path / "data"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    flags = ["--transcripts", str(d), "--manifest", str(manifest), "--corpus", str(corpus),
             "--data-root", str(data), "--methods", "simple"]

    planned = CliRunner().invoke(app, ["plan", *flags, "--json"])
    assert planned.exit_code == 0, planned.output
    steps = {line["step"]: line for line in json.loads(planned.output)["curation"]["lines"]}
    assert steps["transcript_quality"]["calls"] == 4 and steps["personality_category"]["calls"] == 1
    assert not corpus.exists()  # planning wrote nothing

    ran = CliRunner().invoke(app, ["run", *flags, "--assets", "heldout_split"])
    assert ran.exit_code == 0, ran.output
    assert "curation: " in ran.output and "wrote " in ran.output
    assert (corpus / "ADA" / "prepared_input.json").is_file()
    assert partition_path(data, "heldout_split", "ADA").is_file()  # the evaluation read what the curation wrote
    curation = "transcript_turns, speaker_turns, transcript_quality, qa_pairs, qa_tags, prepared_input"
    assert f"personality_assets [ADA]: {curation}\n" in ran.output  # the graph's curation assets made it
    assert all(partition_path(data, name, "ADA").is_file() for name in curation.split(", "))
    doc = corpus / "ADA" / "prepared_input.json"
    made = doc.stat().st_mtime_ns
    rerun = CliRunner().invoke(app, ["run", *flags, "--assets", "heldout_split"])
    assert rerun.exit_code == 0, rerun.output
    assert f"{curation}: up to date, skipped" in rerun.output and doc.stat().st_mtime_ns == made

    again = CliRunner().invoke(app, ["plan", *flags])
    assert again.exit_code == 0, again.output
    assert "curation (transcripts -> corpus):" in again.output
    assert "fact_summary" in again.output  # the evaluation of the curated corpus is planned after it
    cached = CliRunner().invoke(app, ["plan", *flags, "--json"])
    doc = json.loads(cached.output)
    assert doc["curation"]["totals"]["to_send"] == 0  # the run's cache answers every curation call
    assert "lines" in doc  # and the evaluation of the curated corpus is planned beside it


def test_run_without_a_corpus_folder_of_its_own_is_refused(tmp_path, monkeypatch):
    from interviewsim_cli import app

    d, manifest = _transcripts(tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    ran = CliRunner().invoke(app, ["run", "--transcripts", str(d), "--manifest", str(manifest)])
    assert ran.exit_code == 2
    assert "shipped sample" in ran.output


def test_a_curation_over_budget_is_refused_before_any_call(tmp_path, monkeypatch):
    from interviewsim_cli import app

    d, manifest = _transcripts(tmp_path)
    corpus = tmp_path / "corpus"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    ran = CliRunner().invoke(app, [
        "run", "--transcripts", str(d), "--manifest", str(manifest), "--corpus", str(corpus),
        "--data-root", str(tmp_path / "data"), "--methods", "simple", "--builder", "openai/gpt-4.1",
        "--max-cost", "0.000001"])
    assert ran.exit_code == 7, ran.output
    assert "curation's plan costs" in ran.output and "curation plan: " in ran.output
    assert not corpus.exists()
