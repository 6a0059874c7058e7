"""The synthetic sample rendered as raw transcripts (four formats) curates back to the sample's pairs."""

from __future__ import annotations

from collections import Counter

from interviewsim_core.curation.run import curate
from interviewsim_core.curation.sample_transcripts import write_sample_transcripts
from interviewsim_core.curation.structuring import MIN_WORDS, normalise
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.loader import load_corpus, validate_paths
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR


def test_sample_transcripts_round_trip(tmp_path, runner) -> None:
    manifest = write_sample_transcripts(tmp_path / "raw")
    out = tmp_path / "corpus"
    outcome = curate(tmp_path / "raw", manifest, runner, ModelConfig(model="offline/extractive"), out=out)
    assert outcome.problems == [] and outcome.refused == {}
    assert Counter(r["format"] for r in outcome.table()) == {"text": 15, "vtt": 15, "srt": 15, "diarised_json": 15}
    assert validate_paths([out]) == []
    curated = {d.personality_id: d for d in load_corpus(out)}
    for sample in load_corpus(SAMPLE_CORPUS_DIR):
        got = curated[sample.personality_id]
        assert got.personality == sample.personality
        # what the QA rule keeps: questions that ask, both sides at least MIN_WORDS words
        want = [(normalise(p.question), normalise(p.response)) for i in sorted(sample.interviews, key=lambda i: i.sequence)
                for p in i.qa_pairs if "?" in p.question and min(len(p.question.split()), len(p.response.split())) >= MIN_WORDS]
        have = [(p.question, p.response) for i in got.interviews for p in i.qa_pairs]
        assert have == want, sample.personality_id


def test_sample_transcripts_command(tmp_path) -> None:
    from typer.testing import CliRunner

    from interviewsim_cli import app

    res = CliRunner().invoke(app, ["sample-transcripts", str(tmp_path / "raw")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "raw" / "manifest.json").is_file() and len(list((tmp_path / "raw").glob("*/*.vtt"))) == 15


def test_curate_review_command(tmp_path) -> None:
    from typer.testing import CliRunner

    from interviewsim_cli import app
    from interviewsim_core.curation.review import read_decisions

    r = CliRunner()
    assert r.invoke(app, ["curate-review", str(tmp_path), "a.txt", "--reject", "--reason", "a panel"]).exit_code == 0
    assert r.invoke(app, ["curate-review", str(tmp_path), "a.txt", "--accept", "--reason", " "]).exit_code == 2
    assert read_decisions(tmp_path)[0] == {"a.txt": ("reject", "a panel")}
