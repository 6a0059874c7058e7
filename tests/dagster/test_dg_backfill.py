"""Backfills: one personality (all methods) and one method (all personalities), each one run per job."""

from __future__ import annotations

import dagster as dg
from dg_helpers import make_config

from interviewsim_core.pipeline.storage import partition_path
from interviewsim_dagster import launch
from interviewsim_dagster.definitions import build_definitions


def _pxm_files(root, asset="generations"):
    return sorted(str(p.relative_to(root / asset)) for p in (root / asset).rglob("*.parquet")) if (root / asset).exists() else []


def test_single_personality_then_single_method(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))

    specs = launch.plan_runs(defs, instance, cfg.methods, personalities=["TINY_BRISK"])
    assert [(s.job, s.start, s.end) for s in specs] == [
        ("personality_assets", "TINY_BRISK", "TINY_BRISK"),
        ("personality_method_assets", "simple|TINY_BRISK", "memory-10|TINY_BRISK"),
        ("personality_summary_assets", "TINY_BRISK", "TINY_BRISK"),
        ("global_assets", None, None),
    ]
    outcomes = launch.execute(defs, instance, specs, progress=lambda _m: None)
    assert all(o.success for o in outcomes)
    # One run materialised the personality's three method partitions of each P x M asset.
    assert outcomes[1].materializations == 3 * 6
    assert _pxm_files(cfg.data_root) == ["TINY_BRISK/chrono-100.parquet", "TINY_BRISK/memory-10.parquet",
                                         "TINY_BRISK/simple.parquet"]
    assert not partition_path(cfg.data_root, "heldout_split", "TINY_ALDER").exists()
    runs = instance.get_runs()
    assert len(runs) == 4  # one run per job, no run per partition

    specs = launch.plan_runs(defs, instance, cfg.methods, methods=["chrono-100"], selection="generations")
    assert [(s.job, s.start, s.end) for s in specs] == [
        ("personality_method_assets", "chrono-100|TINY_ALDER", "chrono-100|TINY_BRISK"),
    ]
    # The new personality's split is needed first: materialise the per-personality assets for it.
    pre = launch.plan_runs(defs, instance, cfg.methods, personalities=["TINY_ALDER"], selection="heldout_split")
    assert all(o.success for o in launch.execute(defs, instance, pre + specs, progress=lambda _m: None))
    assert _pxm_files(cfg.data_root) == ["TINY_ALDER/chrono-100.parquet", "TINY_BRISK/chrono-100.parquet",
                                         "TINY_BRISK/memory-10.parquet", "TINY_BRISK/simple.parquet"]


def test_non_contiguous_selection_becomes_rectangular_blocks(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple,chrono-100,memory-10,wiki")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    specs = launch.plan_runs(defs, instance, cfg.methods, methods=["simple", "memory-10", "wiki"],
                             selection="generations")
    assert [(s.start, s.end) for s in specs] == [
        ("simple|TINY_ALDER", "simple|TINY_BRISK"), ("memory-10|TINY_ALDER", "wiki|TINY_BRISK"),
    ]
