"""The curation as steps of the graph (``curation/step.py``): one personality, step by step, each reading the
tables of the steps before it, gives the corpus the batched ``interviewsim curate`` gives; a refused personality
is a table, not a document."""

from __future__ import annotations

import json

from interviewsim_core.curation.run import curate
from interviewsim_core.curation.step import curation_personalities, transcripts_version
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.runner import run_steps
from interviewsim_core.pipeline.steps import CURATION_STEPS, Cell

from curation_fixtures import FORMATS, PERSON, write_manifest


def _fixture(tmp_path):
    d = tmp_path / "tx"
    d.mkdir()
    rows = []
    for pid in ("P", "Q"):
        for i, (name, render) in enumerate(FORMATS.values()):
            (d / f"{pid}_{name}").write_text(render(), encoding="utf-8")
            rows.append({"file": f"{pid}_{name}", "personality_id": pid, "person_name": PERSON, "date": f"202{i}-01-01"})
    (d / "empty.txt").write_text("", encoding="utf-8")
    rows.append({"file": "empty.txt", "personality_id": "R", "person_name": PERSON, "date": "2020-01-01"})
    (d / "s.txt").write_text(FORMATS["text"][1](), encoding="utf-8")
    rows.append({"file": "s.txt", "personality_id": "S", "person_name": PERSON, "date": "last spring"})
    manifest = write_manifest(tmp_path / "manifest.json", rows)
    cfg = EvalConfig(corpus=tmp_path / "corpus", data_root=tmp_path / "data", transcripts=d, manifest=manifest)
    return d, manifest, cfg


def _no_split(pid):
    raise AssertionError(f"the curation of {pid} read a split")


def _step(cfg, pid, runner) -> tuple[object, int]:
    """What the graph's scheduler does with one partition: the curation's steps in order, each model step's calls
    sent as one round, each table written and read by the next; returns ``prepared_input`` and the rounds sent."""
    tables = run_steps(cfg, {name: [Cell(pid)] for name in CURATION_STEPS}, _no_split, [pid], [], gateway=runner)
    rounds = sum(int(tables[name]["calls"].iloc[0]) > 0 for name in CURATION_STEPS[1:-1])
    return tables["prepared_input"], rounds


def test_one_personality_round_by_round_writes_what_the_batched_curation_writes(tmp_path, runner) -> None:
    d, manifest, cfg = _fixture(tmp_path)
    assert curation_personalities(cfg) == ["P", "Q", "R", "S"]  # S too: its partition says why it is refused
    batched = curate(d, manifest, runner, cfg.resolve(cfg.builder), out=tmp_path / "batched")
    table, rounds = _step(cfg, "P", runner)
    assert rounds == 4  # attribution (the diarised ids), quality control, QA structuring, tagging
    for name in ("prepared_input.json", "provenance.json"):
        assert (cfg.corpus / "P" / name).read_bytes() == (tmp_path / "batched" / "P" / name).read_bytes()
    assert not (cfg.corpus / "Q").exists()  # one partition, one personality
    assert list(table["file"]) == [f"P_{name}" for name, _r in FORMATS.values()]
    assert table["written"].all() and table["kept"].all() and list(table["pairs"]) == \
        [len(c.pairs) for c in batched.transcripts["P"]]
    assert (cfg.corpus / "categories.csv").read_text().splitlines()[1:] == \
        [line for line in (tmp_path / "batched" / "categories.csv").read_text().splitlines() if line.startswith("P,")]
    for name in CURATION_STEPS:  # one run per step, as a Dagster run of one asset: each reads the Parquet before it
        run_steps(cfg, {name: [Cell("Q")]}, _no_split, ["Q"], [], gateway=runner)
    for name in ("prepared_input.json", "provenance.json"):
        assert (cfg.corpus / "Q" / name).read_bytes() == (tmp_path / "batched" / "Q" / name).read_bytes()
    # the next personality's row joins categories.csv, P's stays
    assert [line.split(",")[0] for line in (cfg.corpus / "categories.csv").read_text().splitlines()] == \
        ["personality_id", "P", "Q"]


def test_a_refused_personality_is_a_table_with_its_problems_and_no_document(tmp_path, runner) -> None:
    _d, _m, cfg = _fixture(tmp_path)
    table, rounds = _step(cfg, "R", runner)
    assert rounds == 0 and not (cfg.corpus / "R").exists()
    (row,) = table.to_dict("records")
    assert not row["written"] and "empty-file" in row["refused"] and "empty.txt" in row["problems"]
    assert "bad-date" not in row["problems"]  # another personality's row
    table, rounds = _step(cfg, "S", runner)  # its only row is refused by the manifest: still a partition with why
    (row,) = table.to_dict("records")
    assert rounds == 0 and not row["written"] and row["file"] == "" and "bad-date" in row["problems"]
    assert not (cfg.corpus / "S").exists()


def transcripts_versions(cfg) -> dict[str, str]:
    """Each partition's ``transcripts_version``, as a run computes it partition by partition."""
    return {pid: transcripts_version(cfg.transcripts, cfg.manifest, cfg.corpus, pid) for pid in curation_personalities(cfg)}


def test_the_data_version_changes_with_the_personality_s_own_inputs_only(tmp_path) -> None:
    d, _m, cfg = _fixture(tmp_path)
    before = transcripts_versions(cfg)
    assert set(before) == {"P", "Q", "R", "S"}
    (d / "P_dialogue.srt").write_text(FORMATS["srt"][1]().replace("garden", "yard"), encoding="utf-8")
    after = transcripts_versions(cfg)
    assert after["P"] != before["P"] and after["Q"] == before["Q"] and after["R"] == before["R"]
    (cfg.corpus).mkdir()
    (cfg.corpus / "review.csv").write_text("file,decision,reason\nQ_dialogue.txt,reject,a panel\n", encoding="utf-8")
    reviewed = transcripts_versions(cfg)
    assert reviewed["Q"] != after["Q"] and reviewed["P"] == after["P"]  # a reviewer's decision re-curates its own


def test_partition_by_partition_the_report_the_review_pages_read_matches_the_batched_one(tmp_path, runner) -> None:
    """The explorer's review pages read ``curation_report.json`` whichever way the corpus was curated: the graph's
    partitions each replace their own personality's entries, and a re-curated one does not repeat its rows."""
    from interviewsim_core.curation.review import load_review

    d, manifest, cfg = _fixture(tmp_path)
    curate(d, manifest, runner, cfg.resolve(cfg.builder), out=tmp_path / "batched")
    for pid in ("Q", "P", "R", "S", "P"):  # P twice: a re-curation replaces its entries
        _step(cfg, pid, runner)
    graph, batched = load_review(cfg.corpus), load_review(tmp_path / "batched")
    assert [r.model_dump() for r in graph.rows] == [r.model_dump() for r in batched.rows]
    assert graph.refused == batched.refused
    report = json.loads((cfg.corpus / "curation_report.json").read_text())
    assert sorted(report["written"]) == ["P", "Q"] and "model_calls" not in report
    assert sum("empty.txt" in p for p in report["problems"]) == 1


def test_each_step_writes_its_own_table_and_a_later_step_re_runs_alone_from_the_stored_ones(tmp_path, runner) -> None:
    """A reviewer's decision re-made by ``transcript_quality`` and the steps after it, each in a run of its own
    reading the Parquet the steps before it wrote (as a Dagster run of those assets does): ingest and attribution
    are not re-run, and the document leaves the rejected transcript out."""
    from interviewsim_core.curation.review import record_decision
    from interviewsim_core.pipeline.storage import partition_path, read_frame

    _d, _m, cfg = _fixture(tmp_path)
    _step(cfg, "P", runner)
    tables = {name: read_frame(partition_path(cfg.data_root, name, "P")) for name in CURATION_STEPS}
    files = [f"P_{name}" for name, _r in FORMATS.values()]
    assert all(list(t["file"]) == files for t in tables.values())  # one row per manifest row, in every table
    turns = tables["transcript_turns"]
    assert turns["calls"].iloc[0] == 0 and all(json.loads(t) for t in turns["turns"])  # ingest: no model
    assert set(tables["speaker_turns"]["roles"].iloc[0]) <= {"person", "interviewer", "other"}
    assert tables["transcript_quality"]["kept"].all() and tables["transcript_quality"]["review_decision"].isna().all()
    assert [len(json.loads(p)) for p in tables["qa_pairs"]["pairs"]] == list(tables["prepared_input"]["pairs"])
    assert tables["qa_tags"]["category"].iloc[0] and tables["qa_tags"]["calls"].iloc[0] == len(files) + 1

    rejected = files[0]
    record_decision(cfg.corpus, rejected, "reject", "a panel, not an interview")
    made = {name: partition_path(cfg.data_root, name, "P").stat().st_mtime_ns for name in CURATION_STEPS[:2]}
    for name in CURATION_STEPS[2:]:
        run_steps(cfg, {name: [Cell("P")]}, _no_split, ["P"], [], gateway=runner)
    assert {name: partition_path(cfg.data_root, name, "P").stat().st_mtime_ns for name in CURATION_STEPS[:2]} == made
    quality = read_frame(partition_path(cfg.data_root, "transcript_quality", "P")).set_index("file")
    assert quality.loc[rejected, "review_decision"] == "reject" and not quality.loc[rejected, "kept"]
    assert bool(quality.loc[rejected, "quality_kept"])  # the model's own verdict kept beside the reviewer's
    pairs = read_frame(partition_path(cfg.data_root, "qa_pairs", "P")).set_index("file")
    assert json.loads(pairs.loc[rejected, "pairs"]) == []  # not structured: excluded
    doc = json.loads((cfg.corpus / "P" / "prepared_input.json").read_text(encoding="utf-8"))
    assert len(doc["interviews"]) == len(files) - 1
