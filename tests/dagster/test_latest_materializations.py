"""The check verdicts' targets read from the event log's columns are the records Dagster would return (issue 43)."""

from __future__ import annotations

import dagster as dg

from interviewsim_dagster.event_log_storage import latest_materializations

PARTS = dg.StaticPartitionsDefinition(["a", "b", "c", "d"])


@dg.asset(partitions_def=PARTS)
def letters(context) -> None:
    context.log.info(f"made {context.partition_key}")


def test_each_partition_points_at_its_latest_materialisation_as_the_records_say():
    with dg.instance_for_test() as instance:
        first = dg.materialize([letters], instance=instance, partition_key="a")
        dg.materialize([letters], instance=instance, partition_key="b")
        last_b = dg.materialize([letters], instance=instance, partition_key="b")
        c = dg.materialize([letters], instance=instance, partition_key="c")
        found = latest_materializations(instance, letters.key, ["a", "b", "c", "d"])
        assert sorted(found) == ["a", "b", "c"]  # d was never made: no target
        assert {p: run for p, (_id, run, _ts) in found.items()} == {"a": first.run_id, "b": last_b.run_id,
                                                                     "c": c.run_id}
        for partition, (storage_id, run_id, timestamp) in found.items():
            (record,) = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=letters.key, asset_partitions=[partition]), limit=1).records
            assert (storage_id, run_id) == (record.storage_id, record.run_id)
            assert abs(timestamp - record.timestamp) < 1e-3
