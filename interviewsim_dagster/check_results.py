"""A check's verdict recorded once per partition of its run, so the UI's check statuses agree.

Why: a run over a partition range (every single-run backfill, every ``interviewsim run``) has no
single partition key, and Dagster records a plain ``AssetCheckResult`` from such a run with no
partition: the check's detail pane (latest execution) says "Passed" while each planned partition
stays planned and reads "Skipped" once the run ends, in the checks sidebar and the group graph
("0 / 1 Passed"). Yielding one ``AssetCheckEvaluation`` per partition (``partition=``) records every
partition's own verdict; the step still ends with the check's (empty) output, as Dagster requires.
The partitions are the run's selection (``run_keys``), also when Dagster gave the run fewer keys
(the job page's backfill): ``run_frames`` completes the check's inputs for those.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path

import dagster as dg
import pandas as pd

from .defs.corpus.partitions import PERSONALITY, dims_of
from .event_log_storage import latest_materializations
from .io_managers import read_partitions
from .run_keys import run_keys, run_partitions_def


def run_frames(context: dg.AssetCheckExecutionContext, loaded: Mapping[str, pd.DataFrame], asset: str,
               asset_def: dg.PartitionsDefinition, data_root: Path | str, *,
               allow_missing: bool = False, columns: Collection[str] | None = None) -> dict[str, pd.DataFrame]:
    """A check input's frames for every partition of the run (``run_keys``), keyed as Dagster keys them.

    Dagster loads the upstream partitions of the run's own ``context.partition_keys`` only; when the run
    holds more (the job page's backfill), the others are read from the same files the IO manager reads,
    with its rule: a missing one is an error unless the input allows missing partitions. A check that reads a few
    columns of its own asset takes no input of it (Dagster would load every column) and reads them all here
    (``loaded`` empty, ``columns``).
    """
    out = {str(k): v for k, v in loaded.items()}
    run_def = run_partitions_def(context)
    ups = {k if isinstance(asset_def, dg.MultiPartitionsDefinition) else dims_of(run_def, k)[PERSONALITY]
           for k in run_keys(context)}
    read, _missing = read_partitions(data_root, asset, sorted(ups - set(out)), asset_def, allow_missing=allow_missing,
                                     columns=columns)
    return {**out, **read}


def per_partition(
    context: dg.AssetCheckExecutionContext, result: dg.AssetCheckResult, failing: Collection[str], *, blocking: bool = False,
) -> Iterator[dg.AssetCheckEvaluation | dg.AssetCheckResult | dg.Output]:
    """``result`` as one evaluation per partition of the run: failed for the keys in ``failing``, passed
    for the others, each with the run-wide metadata. An unpartitioned check yields ``result`` itself.

    ``blocking`` must repeat the check's own ``blocking=``: Dagster stops downstream steps on a failed
    blocking evaluation only when the evaluation says it is blocking.
    """
    if not context.has_partition_key and not context.has_partition_key_range:
        yield result
        return
    check_key = context.check_specs[0].key
    failing = {str(k) for k in failing}
    keys = [str(k) for k in run_keys(context)]
    targets = _targets(context, check_key.asset_key, keys)
    for key in keys:
        bad = key in failing
        yield dg.AssetCheckEvaluation(
            asset_key=check_key.asset_key, check_name=check_key.name, passed=not bad,
            metadata={**(result.metadata or {}), "partition_passed": not bad}, severity=result.severity,
            description=result.description, blocking=blocking, partition=key,
            target_materialization_data=targets.get(key),
        )
    yield dg.Output(None, output_name="result")


def _targets(context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey, partitions: list[str]) -> dict:
    """Each partition's latest materialisation, which its verdict is about: the UI counts a verdict as
    current only when it names that materialisation (else the partition shows no status at all).

    Read from the event log's index columns (``event_log_storage.latest_materializations``), not from the events:
    the records' query walked every materialisation of the asset, newest first, and deserialised each event found
    with its metadata, 0.35-1.3 s for a block of 256 partitions at 1,000 personalities, against 0.01 s for the ids;
    one query per partition before that cost 1.8 s of a 6-personality run (issue 21).

    ``AssetCheckEvaluationTargetMaterializationData`` is the type of ``AssetCheckEvaluation``'s public
    ``target_materialization_data`` argument but is not exported by ``dagster``; Dagster's own
    ``AssetCheckResult`` builds the same pointer for a single-partition run.
    """
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    return {partition: AssetCheckEvaluationTargetMaterializationData(storage_id=storage_id, run_id=run_id,
                                                                     timestamp=timestamp)
            for partition, (storage_id, run_id, timestamp)
            in latest_materializations(context.instance, asset_key, partitions).items()}


def failed_checks(instance: dg.DagsterInstance, graph, personalities: Sequence[str],
                  methods: Sequence[str]) -> list[str]:
    """``asset:check`` for every check whose latest verdict failed on a partition of ``personalities`` x
    ``methods`` (or on its unpartitioned asset), in the instance, whichever run evaluated it.

    Why not the verdicts of the runs just made: a re-run that finds everything up to date makes no run,
    so it evaluated no check, and ``interviewsim run`` ended 6 (invalid outputs, read from the tables)
    where the run before it, on the same data, ended 5 (a check failed). The latest verdicts of the
    covered partitions are the same for both (issue 30: the same data gives the same exit code).
    """
    from .defs.corpus.partitions import pxm_key

    failed: list[str] = []
    for check_key in sorted(graph.asset_check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name)):
        pdef = graph.get(check_key.asset_key).partitions_def
        if pdef is None:
            parts = None
        elif isinstance(pdef, dg.MultiPartitionsDefinition):
            parts = [str(pxm_key(p, m)) for p in personalities for m in methods]
        else:
            parts = list(personalities)
        infos = instance.event_log_storage.get_asset_check_partition_info([check_key], partition_keys=parts)
        if any(i.latest_execution_status.value == "FAILED" for i in infos):  # the enum's module is private
            failed.append(f"{check_key.asset_key.to_user_string()}:{check_key.name}")
    return failed
