"""The optional validation and fine-tuning assets through Dagster: with ``ps_stability: true`` and
``finetune_export: true`` the whole graph materialises ``training_personality``, ``ps_stability``,
``sft_examples`` and ``sft_dataset``, and the report (which runs after ``ps_stability``) shows it."""

from __future__ import annotations

import json

import dagster as dg
import pyarrow.parquet as pq
import pytest

from interviewsim_core.pipeline.storage import partition_path
from interviewsim_core.pipeline.steps import report_paths
from interviewsim_core.pipeline.tables import schema_of
from interviewsim_dagster.definitions import build_definitions

from dg_helpers import PEOPLE, make_config, run_everything, write_person


@pytest.fixture(scope="module")
def validation_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("validation")
    corpus = tmp / "corpus"
    for pid in PEOPLE:
        write_person(corpus, pid)
    cfg = make_config(corpus, tmp / "data", methods="simple", ps_stability=True, finetune_export=True)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    outcomes = run_everything(defs, instance, cfg)
    return {"cfg": cfg, "instance": instance, "outcomes": outcomes}


def _materialised(instance: dg.DagsterInstance, asset: str) -> set[str | None]:
    recs = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset)), limit=100).records
    return {r.asset_materialization.partition for r in recs}


def test_validation_and_finetune_assets_materialise(validation_run):
    cfg, instance = validation_run["cfg"], validation_run["instance"]
    assert all(o.success for o in validation_run["outcomes"])
    assert _materialised(instance, "training_personality") == set(PEOPLE)
    assert _materialised(instance, "sft_examples") == set(PEOPLE)
    assert _materialised(instance, "ps_stability") == {None}
    assert _materialised(instance, "sft_dataset") == {None}
    stab = pq.read_table(partition_path(cfg.data_root, "ps_stability"))
    assert stab.schema.equals(schema_of("ps_stability"))
    assert set(stab.column("personality_id").to_pylist()) == set(PEOPLE)
    for pid in PEOPLE:
        assert pq.read_table(partition_path(cfg.data_root, "sft_examples", pid)).num_rows > 0
    lines = (cfg.data_root / "finetune" / "all_personalities.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["messages"] for line in lines)


def test_report_runs_after_ps_stability_and_shows_it(validation_run):
    cfg, instance = validation_run["cfg"], validation_run["instance"]
    stability = instance.fetch_materializations(dg.AssetKey("ps_stability"), limit=1).records[0]
    report = instance.fetch_materializations(dg.AssetKey("report"), limit=1).records[0]
    assert report.storage_id > stability.storage_id
    doc = json.loads(report_paths(cfg.data_root).json.read_text())
    sec = doc["sections"]["ps_stability"]
    assert sec["status"] == "ok"
    assert {r["judge"] for r in sec["tables"]["summary"]} == {j.name for j in cfg.effective_judges}


@pytest.mark.parametrize("enabled", [True, False])
def test_report_depends_on_ps_stability_only_when_enabled(tmp_path, enabled):
    # Without the edge the report may run (or be automated) before ps_stability and say "not run";
    # with ps_stability off the edge must not leave an undefined ps_stability asset in the graph.
    cfg = make_config(tmp_path / "corpus", tmp_path / "data", methods="simple", ps_stability=enabled)
    graph = build_definitions(cfg).resolve_asset_graph()
    report_deps = graph.get(dg.AssetKey("report")).parent_keys
    assert (dg.AssetKey("ps_stability") in report_deps) is enabled
    assert (dg.AssetKey("ps_stability") in graph.get_all_asset_keys()) is enabled


def test_run_refuses_a_bad_human_labels_file_before_any_model_call(tiny_corpus, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from interviewsim_cli import app

    bad = tmp_path / "human.csv"
    bad.write_text("personality_id,method,qa_id,metric,value\nTINY_ALDER,simple,q1,cs,9\nTINY_ALDER,,q2,fc,Neutral\n")
    config = tmp_path / "interviewsim.yaml"
    config.write_text(f"human_labels_csv: {bad}\n")
    home, data = tmp_path / "home", tmp_path / "data"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    res = CliRunner().invoke(app, ["run", "--corpus", str(tiny_corpus), "--data-root", str(data),
                                   "--config", str(config), "--methods", "simple", "--generator",
                                   "offline/extractive", "--judges", "offline/extractive"])
    assert res.exit_code == 2, res.output
    assert "2 problem(s)" in res.output
    assert "$[line 2].value: [value]" in res.output and "$[line 3].method: [blank]" in res.output
    assert not data.exists() or not any(data.rglob("*.parquet"))
    assert not home.exists() or not any(home.rglob("runs.db"))
