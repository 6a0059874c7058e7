"""A whole graph run on the tiny corpus: every asset's Parquet files, schemas, rows, checks and metadata."""

from __future__ import annotations

import dagster as dg
import pyarrow.parquet as pq

from interviewsim_core.pipeline.storage import partition_path
from interviewsim_core.pipeline.tables import PER_METHOD, schema_of
from interviewsim_core.split import split_personality
from interviewsim_core.loader import load_document

from dg_helpers import PEOPLE

P_ASSETS = ("heldout_split", "fact_summary", "atomic_items", "mcq_items", "reference_personality", "premise_verdicts",
            "personality_scores")
PXM_ASSETS = tuple(sorted(PER_METHOD))


def test_every_run_succeeds_with_checks_passing(full_run):
    outcomes = full_run["outcomes"]
    assert [o.spec.job for o in outcomes] == ["personality_assets", "personality_method_assets",
                                              "personality_summary_assets", "global_assets"]
    assert all(o.success for o in outcomes)
    assert all(not o.checks_failed for o in outcomes)
    # 10 invalid-rate checks + the 3 generation checks + the MCQ leak and MCQ-answered checks ran and passed,
    # each recorded once per partition of its asset (the UI shows every partition's verdict).
    graph, instance = full_run["defs"].resolve_asset_graph(), full_run["instance"]
    checks = list(graph.asset_check_keys)
    assert len(checks) == 15
    per_partition = [len(pd_.get_partition_keys(dynamic_partitions_store=instance)) if (pd_ := graph.get(
        c.asset_key).partitions_def) else 1 for c in checks]
    assert sum(o.checks_passed for o in outcomes) == sum(per_partition)


def test_every_asset_partition_is_a_parquet_file_with_its_schema(full_run):
    cfg = full_run["cfg"]
    root = cfg.data_root
    for asset in P_ASSETS:
        for pid in PEOPLE:
            table = pq.read_table(partition_path(root, asset, pid))
            assert table.schema.equals(schema_of(asset)), asset
            assert table.num_rows > 0, (asset, pid)
    for asset in PXM_ASSETS:
        for pid in PEOPLE:
            for method in cfg.methods:
                table = pq.read_table(partition_path(root, asset, pid, method))
                assert table.schema.equals(schema_of(asset)), asset
                assert table.num_rows > 0, (asset, pid, method)
                assert set(table.column("personality_id").to_pylist()) == {pid}
                assert set(table.column("method").to_pylist()) == {method}
    board = pq.read_table(partition_path(root, "leaderboard"))
    assert board.schema.equals(schema_of("leaderboard"))
    assert sorted(set(board.column("method").to_pylist())) == sorted(cfg.methods)


def test_generations_cover_every_heldout_question_once(full_run):
    cfg = full_run["cfg"]
    for pid in PEOPLE:
        split = split_personality(load_document(cfg.corpus / pid / "prepared_input.json"))
        expected = sorted(p.qa_id for p in split.test_pairs)
        for method in cfg.methods:
            gens = pq.read_table(partition_path(cfg.data_root, "generations", pid, method)).to_pandas()
            assert sorted(gens["qa_id"]) == expected
            assert (gens["status"] == "ok").all()


def test_materialisations_carry_metadata(full_run):
    instance: dg.DagsterInstance = full_run["instance"]
    key = dg.MultiPartitionKey({"personality": PEOPLE[0], "method": "simple"})
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("content_similarity"), asset_partitions=[str(key)]), limit=1
    ).records
    meta = records[0].asset_materialization.metadata
    for name in ("rows", "invalid_outputs", "failed_calls", "cache_hits", "calls_made", "prompt_tokens",
                 "completion_tokens", "cost_usd", "mean_score", "preview", "step_calls_made", "partitions_written"):
        assert name in meta, name
    assert meta["rows"].value > 0
    preview = meta["preview"]  # a table value, shown inline on the asset page, every row of a small partition
    assert isinstance(preview, dg.TableMetadataValue)
    assert len(preview.records) == meta["rows"].value and meta["preview_rows"].value == f"{len(preview.records)} of {len(preview.records)}"
    assert "qa_id" in {c.name for c in preview.schema.columns}
    board = instance.fetch_materializations(dg.AssetKey("leaderboard"), limit=1).records[0]
    assert board.asset_materialization.metadata["partitions_read"].value == len(PEOPLE) * 3
