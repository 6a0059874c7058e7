"""Golden test: the shipped sample, run with the offline model, gives the tables it gave before the refactor.

``golden_sample.json`` is the fingerprint (``golden.py``) of ``interviewsim demo``'s Parquet tables taken
from the code before the evaluation graph became one step table: every table, row for row, except
the ``*cache_hit`` columns. The direct runner (fast, in process) must reproduce it on the shipped sample.
``interviewsim demo`` (``slow``) now starts from the sample's raw transcripts and evaluates the corpus
it curates from them (other interview ids, the curation's tags and categories, pairs the QA rule keeps),
so its run is checked for what that adds: the same tables, the calibration rows, and the report's
breakdowns by question tag and by personality category filled from the curation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from golden import differences, fingerprint, read_tables

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

FIXTURE = Path(__file__).with_name("golden_sample.json")


def _expected() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _compare(root: Path, tables: set[str] | None = None) -> None:
    expected = _expected()
    got = fingerprint(root)
    if tables is not None:
        expected = {k: v for k, v in expected.items() if k in tables}
        got = {k: v for k, v in got.items() if k in tables}
    problems = differences(expected, got, read_tables(root))
    assert not problems, "run differs from the golden sample:\n" + "\n".join(problems)


def test_direct_runner_reproduces_the_golden_sample(tmp_path):
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    run_evaluation(EvalConfig(data_root=tmp_path))
    assert (tmp_path / "report" / "report.html").is_file()
    _compare(tmp_path)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the whole demo (14 methods) in process: ~5 min quiet, 11 min seen on a loaded machine
def test_dagster_demo_curates_raw_transcripts_and_fills_the_breakdowns(tmp_path, monkeypatch):
    import csv
    from collections import Counter

    from typer.testing import CliRunner

    from interviewsim_cli import app
    from interviewsim_core.pipeline.steps import CURATION_STEPS
    from interviewsim_core.loader import load_corpus, validate_paths
    from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR
    from interviewsim_core.schema import THEMATIC_CATEGORIES
    from interviewsim_core.strategies.calibration import CALIBRATION_METHODS

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    result = CliRunner().invoke(app, ["demo", "--data-root", str(data)])
    assert result.exit_code == 0, result.output
    assert (data / "report" / "report.html").is_file()
    # The raw transcripts, in the four formats, and the corpus curated from them, under the data root.
    raw, corpus = data / "demo_input" / "transcripts", data / "demo_input" / "corpus"
    rows = json.loads((raw / "manifest.json").read_text(encoding="utf-8"))
    assert all((raw / r["file"]).is_file() for r in rows)
    assert Counter(Path(r["file"]).suffix for r in rows) == {".txt": 15, ".vtt": 15, ".srt": 15, ".json": 15}
    assert validate_paths([corpus]) == []
    curated = {d.personality_id: d for d in load_corpus(corpus)}
    assert set(curated) == {d.personality_id for d in load_corpus(SAMPLE_CORPUS_DIR)}
    # The evaluation read the curated corpus: its held-out questions are the curated ones.
    tables = read_tables(data)
    curated_ids = {p.qa_id for d in curated.values() for i in d.interviews for p in i.qa_pairs}
    assert set(tables["heldout_split"]["qa_id"]) <= curated_ids
    # Same tables as the sample's run (plus the PS stability check's two and the curation's six, one row per
    # transcript each), the calibration rows still there.
    assert set(fingerprint(data)) - set(_expected()) == {"training_personality", "ps_stability", *CURATION_STEPS}
    assert tables["prepared_input"]["written"].all() and len(tables["prepared_input"]) == len(rows)
    board = tables["leaderboard"]
    assert set(CALIBRATION_METHODS) <= set(board["method"])
    cs = board[(board["metric"] == "cs_mean") & (board["view"] == "all_valid") & ~board["method"].isin(CALIBRATION_METHODS)]
    assert cs["normalised"].notna().all() and set(cs["norm_floor"]) == {"copy-nearest"}
    # The report's two breakdowns, "not run" on the prepared sample, are filled from the curation.
    sections = json.loads((data / "report" / "report.json").read_text(encoding="utf-8"))["sections"]
    tags, cats = sections["tag_breakdown"], sections["category_breakdown"]
    assert tags["status"] == "ok" and cats["status"] == "ok", (tags["note"], cats["note"])
    assert {r["group"] for r in tags["tables"]["by_tag"]} <= set(THEMATIC_CATEGORIES)
    with (corpus / "categories.csv").open(encoding="utf-8") as fh:
        categories = {r["personality_id"]: r["category"] for r in csv.DictReader(fh)}
    assert set(categories) == set(curated)
    assert {r["group"] for r in cats["tables"]["by_category"]} == set(categories.values())
    # Two generators (issue 44): the offline model and offline/terse, compared in the report's Generators section.
    gen = sections["generators"]
    assert gen["status"] == "ok" and {r["generator"] for r in gen["tables"]["by_generator"]} == {"extractive", "terse"}
    assert {r["generator_a"] for r in gen["tables"]["paired_generators"]} == {"terse"}
    assert {"terse/simple", "terse/chrono-100"} <= set(board["method"]) and not {"terse/reference"} & set(board["method"])
