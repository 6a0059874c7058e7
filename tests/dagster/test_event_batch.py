"""A run's materialisations of one asset stored as one batch (``EngineKeepingSqliteEventLogStorage.store_event_batch``,
issue 43) read back as Dagster's one-by-one storing leaves them: every partition's record with its metadata and
tags, the asset's latest materialisation, the tags Dagster indexes (data versions, which staleness reads)."""

import shutil
from pathlib import Path

import dagster as dg
import pytest

REPO = Path(__file__).resolve().parents[2]
PARTS = dg.StaticPartitionsDefinition(["a", "b", "c", "d"])


@dg.asset(partitions_def=PARTS)
def counted(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    for key in context.partition_keys:
        context.add_asset_metadata({"rows": len(key) + ord(key)}, partition_key=key)
    return dg.MaterializeResult(metadata={"run_total": len(context.partition_keys)}, data_version=dg.DataVersion("v1"))


def _stored(home: Path, batch: str, monkeypatch) -> dict:
    home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", batch)
    with dg.DagsterInstance.get() as instance:
        calls: list[int] = []
        storage = instance.event_log_storage
        original = storage.store_event_batch
        storage.store_event_batch = lambda events: (calls.append(len(events)), original(events))[1]
        result = dg.materialize([counted], instance=instance, tags={"dagster/asset_partition_range_start": "a",
                                                                    "dagster/asset_partition_range_end": "d"})
        assert result.success
        records = instance.fetch_materializations(dg.AssetKey("counted"), limit=10).records
        latest = instance.get_latest_materialization_event(dg.AssetKey("counted"))
        by_version = instance.get_event_tags_for_asset(dg.AssetKey("counted"), filter_tags={"dagster/data_version": "v1"})
        run_log = [e.dagster_event.partition for e in instance.all_logs(result.run_id)
                   if e.is_dagster_event and e.dagster_event.is_step_materialization]
        return {
            "batches": calls,
            "partitions": sorted((r.partition_key, r.asset_materialization.metadata["rows"].value,
                                  r.asset_materialization.metadata["run_total"].value) for r in records),
            "latest": latest.dagster_event.partition if latest else None,
            "by_version": sorted(sorted(tags.items()) for tags in by_version),
            "run_log": sorted(run_log),
            "status": sorted(instance.get_materialized_partitions(dg.AssetKey("counted"))),
        }


@pytest.mark.parametrize("size", ["100", "2"])
def test_a_batch_reads_back_as_events_stored_one_by_one(tmp_path, monkeypatch, size):
    one_by_one = _stored(tmp_path / "single", "0", monkeypatch)
    batched = _stored(tmp_path / "batched", size, monkeypatch)
    # the run's planned materialisations, then its materialisations
    assert one_by_one["batches"] == [] and batched["batches"] == ([4, 4] if size == "100" else [2, 2, 2, 2])
    assert batched["partitions"] == one_by_one["partitions"] == [(k, 1 + ord(k), 4) for k in "abcd"]
    for field in ("latest", "by_version", "run_log", "status"):
        assert batched[field] == one_by_one[field], field
    assert len(batched["by_version"]) == 4 and batched["latest"] in set("abcd")


def test_the_package_turns_batching_on():
    """Every process that loads the definitions batches (the command, the UI's, a run's): a fresh interpreter."""
    import subprocess
    import sys

    env = {k: v for k, v in __import__("os").environ.items() if k != "DAGSTER_EVENT_BATCH_SIZE"}
    out = subprocess.run([sys.executable, "-c", "import os, interviewsim_dagster; print(os.environ['DAGSTER_EVENT_BATCH_SIZE'])"],
                         env=env, cwd=REPO, capture_output=True, text=True, check=True, timeout=120).stdout
    assert int(out) > 0
