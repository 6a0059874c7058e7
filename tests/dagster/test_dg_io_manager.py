"""The Parquet IO manager: layout, explicit schema, atomic writes, multi-partition loads, missing partitions."""

from __future__ import annotations

import dagster as dg
import pandas as pd
import pytest

from interviewsim_core.pipeline.tables import empty_frame
from interviewsim_dagster.defs.corpus.partitions import personality_x_method
from interviewsim_dagster.io_managers import ALLOW_MISSING, ParquetIOManager, partition_path

PXM = personality_x_method(["chrono-100", "simple"])


def _split_rows(pid: str) -> pd.DataFrame:
    return pd.DataFrame([{
        "personality_id": pid, "qa_id": "Q1", "partition": "test", "interview_id": "I1", "sequence": 1,
        "position": 0, "order": 0, "question": "q?", "response": "r.", "tags": ["a"],
    }])


def test_paths_follow_core_layout_and_parse_multi_keys(tmp_path):
    key = str(dg.MultiPartitionKey({"personality": "P1", "method": "chrono-100"}))
    assert key == "chrono-100|P1"  # alphabetical dimension order, never split by hand
    assert partition_path(tmp_path, "generations", key, PXM) == tmp_path / "generations" / "P1" / "chrono-100.parquet"
    assert partition_path(tmp_path, "leaderboard", None, None) == tmp_path / "leaderboard.parquet"


def test_round_trip_of_several_partitions_leaves_no_temp_files(tmp_path):
    io = ParquetIOManager(data_root=str(tmp_path))
    pdef = dg.StaticPartitionsDefinition(["P1", "P2"])
    out = dg.build_output_context(asset_key=dg.AssetKey("heldout_split"), partition_key=None,
                                  asset_partitions_def=pdef,
                                  asset_partition_key_range=dg.PartitionKeyRange("P1", "P2"))
    io.handle_output(out, {"P1": _split_rows("P1"), "P2": _split_rows("P2")})
    assert sorted(p.name for p in (tmp_path / "heldout_split").iterdir()) == ["P1.parquet", "P2.parquet"]
    inp = dg.build_input_context(asset_key=dg.AssetKey("heldout_split"), asset_partitions_def=pdef,
                                 asset_partition_key_range=dg.PartitionKeyRange("P1", "P2"))
    loaded = io.load_input(inp)
    assert set(loaded) == {"P1", "P2"}
    assert loaded["P2"]["tags"].tolist() == [["a"]]


def test_wrong_columns_are_refused_at_write_time(tmp_path):
    io = ParquetIOManager(data_root=str(tmp_path))
    pdef = dg.StaticPartitionsDefinition(["P1"])
    out = dg.build_output_context(asset_key=dg.AssetKey("heldout_split"), asset_partitions_def=pdef,
                                  asset_partition_key_range=dg.PartitionKeyRange("P1", "P1"))
    with pytest.raises(ValueError):
        io.handle_output(out, pd.DataFrame({"personality_id": ["P1"]}))
    assert not (tmp_path / "heldout_split" / "P1.parquet").exists()


def test_missing_upstream_partition_fails_unless_allowed(tmp_path):
    io = ParquetIOManager(data_root=str(tmp_path))
    pdef = dg.StaticPartitionsDefinition(["P1", "P2"])
    out = dg.build_output_context(asset_key=dg.AssetKey("fact_summary"), asset_partitions_def=pdef,
                                  asset_partition_key_range=dg.PartitionKeyRange("P1", "P1"))
    io.handle_output(out, empty_frame("fact_summary"))
    rng = dg.PartitionKeyRange("P1", "P2")
    strict = dg.build_input_context(asset_key=dg.AssetKey("fact_summary"), asset_partitions_def=pdef,
                                    asset_partition_key_range=rng)
    with pytest.raises(FileNotFoundError, match="P2"):
        io.load_input(strict)
    lenient = dg.build_input_context(asset_key=dg.AssetKey("fact_summary"), asset_partitions_def=pdef,
                                     asset_partition_key_range=rng, definition_metadata={ALLOW_MISSING: True})
    assert set(io.load_input(lenient)) == {"P1"}
