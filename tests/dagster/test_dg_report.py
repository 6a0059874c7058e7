"""The report asset and the leaderboard's report tables, on a tiny run (two people, two methods)."""

from __future__ import annotations

import json

import dagster as dg
import pandas as pd
import pytest
from dg_helpers import PEOPLE, make_config, run_everything, write_person

from interviewsim_core.pipeline.storage import partition_path, read_frame
from interviewsim_dagster import launch
from interviewsim_dagster.definitions import build_definitions
from interviewsim_core.pipeline.steps import report_paths
from interviewsim_core.report.catalog import readable
from interviewsim_view import urls
from interviewsim_view.urls import explorer_url

METHODS = "simple,chrono-100"
SECTIONS = {"leaderboard", "calibration", "human_validation", "paired_tests", "generators", "judge_agreement", "human_agreement", "ps_stability", "tag_breakdown", "validity",
            "category_breakdown", "mcq",
            "memory_ablation", "cost", "overlap", "premise"}


def _latest(instance: dg.DagsterInstance, asset: str, partition: str | None = None) -> dict:
    flt = dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None)
    return instance.fetch_materializations(flt, limit=1).records[0].asset_materialization.metadata


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    corpus = tmp / "corpus"
    for pid in PEOPLE:
        write_person(corpus, pid)
    cfg = make_config(corpus, tmp / "data", methods=METHODS)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    outcomes = run_everything(defs, instance, cfg)
    return {"cfg": cfg, "defs": defs, "instance": instance, "outcomes": outcomes}


def test_report_is_a_global_asset_downstream_of_everything(small_run):
    graph = small_run["defs"].resolve_asset_graph()
    node = graph.get(dg.AssetKey("report"))
    assert node.group_name == "report" and node.partitions_def is None
    # and the personalities' files, which every table made from them reads (defs/corpus/sources.py)
    assert {k.to_user_string() for k in node.parent_keys} == {"leaderboard", "premise_verdicts", "personality_sources"}
    assert node.automation_condition is not None
    global_job = small_run["defs"].resolve_job_def(launch.GLOBAL_JOB)
    assert dg.AssetKey("report") in global_job.asset_layer.executable_asset_keys


def test_run_writes_html_and_json_with_every_section(small_run):
    cfg, outcomes = small_run["cfg"], small_run["outcomes"]
    assert all(o.success for o in outcomes)
    last = outcomes[-1]
    assert last.spec.job == launch.GLOBAL_JOB and dg.AssetKey("report") in last.spec.assets
    paths = report_paths(cfg.data_root)
    html = paths.html.read_text(encoding="utf-8")
    doc = json.loads(paths.json.read_text(encoding="utf-8"))
    assert set(doc["sections"]) == SECTIONS
    for key in ("leaderboard", "paired_tests", "mcq", "cost", "overlap", "premise"):
        assert doc["sections"][key]["status"] == "ok", key
        assert doc["sections"][key]["title"] in html
    assert sorted(doc["meta"]["personalities"]) == sorted(PEOPLE)
    assert not [p for p in paths.html.parent.iterdir() if p.name.endswith(".tmp")]


def test_report_numbers_match_the_parquet_tables(small_run):
    cfg = small_run["cfg"]
    scores = pd.concat([read_frame(partition_path(cfg.data_root, "method_scores", p, m))
                        for p in PEOPLE for m in cfg.methods])
    board = json.loads(report_paths(cfg.data_root).json.read_text())["sections"]["leaderboard"]["tables"]["leaderboard"]
    cs = {(r["method"], r["judge"]): r["value"] for r in board if r["metric"] == "cs_mean"}
    expected = scores.groupby(["method", "judge"])["cs_mean"].mean()  # macro: one value per personality
    assert len(cs) == len(expected) == len(cfg.methods)
    for (method, judge), value in expected.items():
        assert cs[(method, judge)] == pytest.approx(value)
    premise = pd.concat([read_frame(partition_path(cfg.data_root, "premise_verdicts", p)) for p in PEOPLE])
    overall = json.loads(report_paths(cfg.data_root).json.read_text())["sections"]["premise"]["tables"]["overall"][0]
    judged = premise[premise["verdict"].isin(["PASS", "FAIL"])]
    assert overall["n"] == len(premise)
    assert overall["pass_rate"] == pytest.approx((judged["verdict"] == "PASS").mean())


def test_leaderboard_metadata_carries_the_report_tables(small_run):
    instance, cfg = small_run["instance"], small_run["cfg"]
    board_md = _latest(instance, "leaderboard")["report_tables"]
    assert isinstance(board_md, dg.MarkdownMetadataValue)
    lines = board_md.value.splitlines()
    assert lines[0].startswith("| Method | CS (")
    assert {line.split("|")[1].strip() for line in lines[2:2 + len(cfg.methods)]} == set(cfg.methods)
    # The report shows the very same table: one source for the UI and the file.
    report_meta = _latest(instance, "report")
    assert report_meta["leaderboard"].value == board_md.value
    assert report_meta["html"].value == str(report_paths(cfg.data_root).html)
    assert report_meta["json"].value == str(report_paths(cfg.data_root).json)
    assert "category_breakdown" in report_meta["sections_not_run"].value
    assert "| Leaderboard" in report_meta["section_status"].value


def test_leaderboard_is_inline_as_a_table_with_every_row(small_run):
    """Every (method, judge, metric) row of the headline view, typed; MCQ says judge-independent, never nan."""
    from interviewsim_dagster.presenters import MCQ_JUDGE

    cfg = small_run["cfg"]
    meta = _latest(small_run["instance"], "leaderboard")
    table = meta["leaderboard"]
    assert isinstance(table, dg.TableMetadataValue)
    assert [c.name for c in table.schema.columns] == ["method", "judge", "metric", "value", "ci_low", "ci_high",
                                                      "coverage", "below_threshold", "n_personalities", "best",
                                                      "empty_reason", "ci_note"]
    board = pd.read_parquet(cfg.data_root / "leaderboard.parquet")
    common = board[board["view"] == "common"]
    assert len(table.records) == len(common)
    rows = {(r.data["method"], r.data["judge"], r.data["metric"]): r.data for r in table.records}
    for r in common.itertuples():
        got = rows[(r.method, r.judge if isinstance(r.judge, str) else MCQ_JUDGE, r.metric)]
        assert got["value"] == readable(r.value) and got["best"] == bool(r.best)  # rounded for reading (issue 33)
        assert got["coverage"] == f"{r.cells_valid}/{r.cells_expected} ({r.coverage * 100:.0f}%)"
        assert got["n_personalities"] == r.n_personalities
    assert {r.data["judge"] for r in table.records if r.data["metric"].startswith("mcq")} == {MCQ_JUDGE}
    tests = meta["paired_tests"]
    assert isinstance(tests, dg.TableMetadataValue) and tests.records
    assert MCQ_JUDGE in {r.data["judge"] for r in tests.records}
    assert not [r for r in tests.records if r.data["judge"] in ("nan", "", None)]
    assert "| nan |" not in meta["report_tables"].value


def test_report_is_a_link(small_run):
    meta = _latest(small_run["instance"], "report")
    url = meta["report_url"]
    assert isinstance(url, dg.UrlMetadataValue)
    # The explorer serves the report: a browser refuses a file:// link from the UI's http page (issue 33).
    assert url.value == explorer_url(path=urls.report()) == "http://127.0.0.1:8765/report"
    assert meta["html"].value == str(report_paths(small_run["cfg"].data_root).html)
    board = _latest(small_run["instance"], "leaderboard")
    assert board["report_view"].value == explorer_url() and "interviewsim view --data-root" in board["explorer_command"].value


def test_coverage_shows_the_cells_that_are_missing(small_run):
    """Every coverage cell of a complete run reads 100% because every cell was valid; a lost answer shows."""
    from interviewsim_dagster.presenters import leaderboard_table
    from interviewsim_core.pipeline.tables import concat_table
    from interviewsim_core.report import build_report

    cfg = small_run["cfg"]
    scores = concat_table("method_scores", [read_frame(partition_path(cfg.data_root, "method_scores", p, m))
                                            for p in PEOPLE for m in cfg.methods])
    simple = scores["method"] == "simple"
    expected = int(sum(len(c) for c in scores.loc[simple, "cs_cells"]))
    i = scores.index[simple & (scores["personality_id"] == PEOPLE[0])][0]
    lost = len(scores.at[i, "cs_cells"]) - 1  # all but one answer of one personality lost
    scores.at[i, "cs_cells"], scores.at[i, "cs_mean_items"] = scores.at[i, "cs_cells"][:1], scores.at[i, "cs_mean_items"][:1]
    board = build_report(tables={"method_scores": scores}, seed=0).section("leaderboard").tables["leaderboard"]
    rows = {(r.data["method"], r.data["metric"]): r.data for r in leaderboard_table(board).records}
    valid = expected - lost
    assert rows[("simple", "cs_mean")]["coverage"] == f"{valid}/{expected} ({valid / expected * 100:.0f}%)"
    assert rows[("simple", "cs_mean")]["below_threshold"] is True
    assert rows[("chrono-100", "cs_mean")]["coverage"] == f"{expected}/{expected} (100%)"
    assert rows[("simple", "mcq3_accuracy")]["coverage"].endswith("(100%)")  # only the lost metric shows it


def test_premise_partitions_show_the_attribution_split_first(small_run):
    meta = _latest(small_run["instance"], "premise_verdicts", PEOPLE[0])
    names = list(meta)  # the IO manager's own entries (path, partitions_written) come first, then the asset's
    assert names.index("attribution_split") < min(names.index(n) for n in ("pass_rate", "rows", "preview"))
    for line in ("PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE"):
        assert line in meta["attribution_split"].value
    assert "pass_rate" in meta and "label_clusters" in meta


def test_report_follows_a_changed_leaderboard_not_a_rewritten_one(small_run, tmp_path):
    import shutil

    from interviewsim_core.pipeline.study import STUDY_FILE

    defs, instance, cfg = small_run["defs"], small_run["instance"], small_run["cfg"]
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert first.get_num_requested(dg.AssetKey("report")) == 0
    specs = launch.plan_runs(defs, instance, cfg.methods, selection="leaderboard")
    assert all(o.success for o in launch.execute(defs, instance, specs, progress=lambda _m: None))
    same = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert same.get_num_requested(dg.AssetKey("report")) == 0  # identical content: nothing to redo
    # A judge change gives the leaderboard a new version (its rows are per judge): the report follows.
    # On a copy of the tables without their study record: a leaderboard re-made with another judge over the
    # old judgments is what a data root's study refuses (test_dg_study), and the module's data root stays as it was.
    root = tmp_path / "data"
    shutil.copytree(cfg.data_root, root, ignore=shutil.ignore_patterns(STUDY_FILE))
    cfg2 = cfg.model_copy(update={"judges": tuple(j.model_copy(update={"seed": 7}) for j in cfg.effective_judges),
                                  "data_root": root})
    defs2 = build_definitions(cfg2)
    specs = launch.plan_runs(defs2, instance, cfg2.methods, selection="leaderboard")
    assert all(o.success for o in launch.execute(defs2, instance, specs, progress=lambda _m: None))
    second = dg.evaluate_automation_conditions(defs=defs2, instance=instance, cursor=same.cursor)
    assert second.get_num_requested(dg.AssetKey("report")) == 1


def test_one_personality_run_still_gets_its_leaderboard_and_report(tiny_corpus, tmp_path):
    """One person means one pair per paired test: the report says p = 1 rather than failing the run."""
    cfg = make_config(tiny_corpus, tmp_path / "data", methods=METHODS)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    outcomes = run_everything(defs, instance, cfg, personalities=[PEOPLE[0]])
    assert all(o.success for o in outcomes)
    doc = json.loads(report_paths(cfg.data_root).json.read_text())
    assert doc["meta"]["personalities"] == [PEOPLE[0]]
    tests = doc["sections"]["paired_tests"]["tables"]["paired_tests"]
    assert tests and all(t["n"] == 1 and t["p_value"] == 1.0 for t in tests)


def test_report_asset_uses_configured_methods_categories_and_embedder(small_run, tmp_path):
    """A method dropped from the config (its Parquet still on disk) is left out; the configured
    categories file and embedder are the ones the report uses."""
    import shutil

    from interviewsim_core.embeddings import HashingEmbedder
    from interviewsim_dagster.definitions import build_resources
    from interviewsim_dagster.factory import build_step_assets

    cfg = small_run["cfg"]
    root = tmp_path / "data"
    shutil.copytree(cfg.data_root, root)
    cats = tmp_path / "cats.csv"
    cats.write_text("personality_id,category\n" + "".join(f"{p},Group{i}\n" for i, p in enumerate(PEOPLE)))
    narrowed = make_config(cfg.corpus, root, methods="simple", categories_csv=str(cats))
    assert narrowed.categories_csv == cats.resolve()  # made absolute like every path of the resource
    result = dg.materialize(build_step_assets(narrowed, only=("report",)), resources=build_resources(narrowed),
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    doc = json.loads(report_paths(root).json.read_text())
    assert doc["meta"]["methods"] == ["simple"]
    assert {r["method"] for r in doc["sections"]["leaderboard"]["tables"]["leaderboard"]} == {"simple"}
    assert doc["sections"]["category_breakdown"]["status"] == "ok"
    assert {r["group"] for r in doc["sections"]["category_breakdown"]["tables"]["by_category"]} == {
        f"Group{i}" for i in range(len(PEOPLE))}
    assert doc["sections"]["overlap"]["tables"]["summary"][0]["embedder"] == HashingEmbedder().name


def test_leaderboard_parquet_and_report_json_show_the_same_intervals(small_run):
    cfg = small_run["cfg"]
    parquet = pd.read_parquet(cfg.data_root / "leaderboard.parquet")
    index = {(r["method"], r["judge"] if isinstance(r["judge"], str) else None, r["metric"], r["view"]): r
             for r in parquet.to_dict("records")}
    board = json.loads(report_paths(cfg.data_root).json.read_text())["sections"]["leaderboard"]["tables"]["leaderboard"]
    assert len(board) == len(index)
    bounds = 0
    for r in board:
        p = index[(r["method"], r["judge"], r["metric"], r["view"])]
        for key in ("value", "ci_low", "ci_high", "coverage"):
            if r[key] is None:
                assert pd.isna(p[key]), (r, key)
            else:
                assert p[key] == pytest.approx(r[key], abs=1e-12), (r, key)
                bounds += key in ("ci_low", "ci_high")
        assert bool(p["best"]) == r["best"]
    assert bounds > 0
