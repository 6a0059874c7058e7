"""The partition keys a run was launched for, whatever page launched it.

Why this is not just ``context.partition_keys``: Dagster 1.13's job-page backfill of a P x M job (Jobs ->
``personality_method_assets`` -> Materialize all -> method ``chrono-100``, personality All) makes one run
(single-run backfill policy) tagged with the selection's range (``dagster/asset_partition_range_start/end``)
*and* the first partition's dimension tags (``dagster/partition/personality=...``). Dagster reads the
dimension tags first, so the run's ``context.partition_keys`` is that one partition, while the backfill
page (and Dagster's own backfill bookkeeping, which reads the range tags) counts the whole selection.

The range tags and the backfill's own record say what the user selected: ``run_keys`` returns those
partitions when, and only when, the range and the single-partition tags disagree; every other run keeps
Dagster's keys untouched (a correct run is never widened). The engine writes them all and records one
materialisation per partition (``engine``); the checks evaluate them all (``check_results``).
"""

from __future__ import annotations

import dagster as dg

# Dagster's documented run tags for a partition range (what a single-run backfill puts on its run;
# Dagster 1.13.x). ``JobDefinition.execute_in_process`` takes no range argument in 1.13, and the
# constants' home module is private (``dagster._core``), so the public tag strings are spelled here;
# ``tests/dagster/test_dg_backfill.py`` fails if a run stops covering its range.
ASSET_PARTITION_RANGE_START_TAG = "dagster/asset_partition_range_start"
ASSET_PARTITION_RANGE_END_TAG = "dagster/asset_partition_range_end"

PARTITION_TAG_PREFIX = "dagster/partition"
BACKFILL_TAG = "dagster/backfill"


def run_keys(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[str]:
    """The run's partition keys: Dagster's, or the selection its range tags and backfill record name.

    Raises:
        dg.Failure: the tags disagree and the selection cannot be recovered (the job has no single
            partitions definition, or the tagged partition is not in the recorded selection): refused
            before any call, rather than writing one partition and reporting a range.
    """
    keys = [str(k) for k in context.partition_keys]
    tags = context.run.tags
    start, end = tags.get(ASSET_PARTITION_RANGE_START_TAG), tags.get(ASSET_PARTITION_RANGE_END_TAG)
    if not (start and end) or len(keys) != 1 or (start, end) == (keys[0], keys[0]):
        return keys
    selected = _selection(context, start, end)
    if not selected or keys[0] not in selected:
        single = {k: v for k, v in tags.items() if k.startswith(PARTITION_TAG_PREFIX)}
        raise dg.Failure(
            f"this run was launched for the partitions {start} .. {end}, but it also carries the single-partition "
            f"tag(s) {single}, so Dagster would record only {keys[0]}, and the selection could not be recovered from "
            "the run's backfill. Nothing was run. Launch the same selection from the asset graph, the Catalog or an "
            "asset's Partitions tab (those launch one run over the whole range), or with "
            "`interviewsim run --methods ... --personalities ...`.")
    return selected


def run_partitions_def(context) -> dg.PartitionsDefinition | None:
    """The partitions definition the run's keys belong to (every stage job has exactly one)."""
    return context.job_def.partitions_def


def _selection(context, start: str, end: str) -> list[str] | None:
    """The keys of the run's range, in the definition's order, kept to those its backfill selected.

    A job backfill whose selection is not one rectangle launches one run per range; intersecting with
    the backfill's ``partition_names`` keeps each run to its own part of the selection."""
    pdef = run_partitions_def(context)
    if pdef is None:
        return None
    in_range = [str(k) for k in pdef.get_partition_keys_in_range(
        dg.PartitionKeyRange(start, end), dynamic_partitions_store=context.instance)]
    backfill_id = context.run.tags.get(BACKFILL_TAG)
    backfill = context.instance.get_backfill(backfill_id) if backfill_id else None
    names = getattr(backfill, "partition_names", None) if backfill is not None else None
    if names:
        chosen = set(names)
        in_range = [k for k in in_range if k in chosen]
    return in_range
