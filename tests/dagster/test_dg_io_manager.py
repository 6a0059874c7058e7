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


def test_temp_files_of_a_killed_writer_are_removed_at_the_next_write(tmp_path):
    """A SIGKILL between temp creation and rename leaves ``.X.parquet.*.tmp``; the next write of X removes it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import pandas as pd

    from interviewsim_core.pipeline.storage import partition_path, write_frame

    target = partition_path(tmp_path, "heldout_split", "P1")
    # A real writer, killed while it holds its temp file open (its write callback never returns).
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from interviewsim_core.atomic_files import atomic_write\n"
        "def hang(fh):\n"
        "    fh.write(b'half a parquet file'); fh.flush(); print('writing', flush=True); time.sleep(600)\n"
        "atomic_write(Path(sys.argv[1]), hang)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert proc.stdout.readline().strip() == b"writing"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    leftovers = list(target.parent.glob(f".{target.name}.*.tmp"))
    assert len(leftovers) == 1
    # An old-style temp of unknown owner, recent: may belong to a live writer elsewhere, so it stays.
    foreign = target.parent / f".{target.name}.abc123.tmp"
    foreign.write_bytes(b"x")
    old_foreign = target.parent / f".{target.name}.zz9.tmp"
    old_foreign.write_bytes(b"x")
    os.utime(old_foreign, (time.time() - 7200, time.time() - 7200))
    other_file = target.parent / f".{target.name}x.1.tmp"  # another partition's temp: not this write's business
    other_file.write_bytes(b"x")

    df = pd.DataFrame({"personality_id": ["P1"], "qa_id": ["Q"], "partition": ["train"], "interview_id": ["I"],
                       "sequence": [1], "position": [0], "order": [0], "question": ["q"], "response": ["r"], "tags": [[]]})
    write_frame(df, "heldout_split", target)
    assert target.is_file()
    assert not leftovers[0].exists() and not old_foreign.exists()
    assert foreign.exists() and other_file.exists()
