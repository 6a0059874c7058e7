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

from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import dagster as dg
import pandas as pd

from .defs.corpus.partitions import PERSONALITY, dims_of
from .io_managers import read_partitions
from .run_keys import run_keys, run_partitions_def


def run_frames(context: dg.AssetCheckExecutionContext, loaded: Mapping[str, pd.DataFrame], asset: str,
               asset_def: dg.PartitionsDefinition, data_root: Path | str, *,
               allow_missing: bool = False) -> dict[str, pd.DataFrame]:
    """A check input's frames for every partition of the run (``run_keys``), keyed as Dagster keys them.

    Dagster loads the upstream partitions of the run's own ``context.partition_keys`` only; when the run
    holds more (the job page's backfill), the others are read from the same files the IO manager reads,
    with its rule: a missing one is an error unless the input allows missing partitions.
    """
    out = {str(k): v for k, v in loaded.items()}
    run_def = run_partitions_def(context)
    ups = {k if isinstance(asset_def, dg.MultiPartitionsDefinition) else dims_of(run_def, k)[PERSONALITY]
           for k in run_keys(context)}
    read, _missing = read_partitions(data_root, asset, sorted(ups - set(out)), asset_def, allow_missing=allow_missing)
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
    for key in run_keys(context):
        bad = str(key) in failing
        yield dg.AssetCheckEvaluation(
            asset_key=check_key.asset_key, check_name=check_key.name, passed=not bad,
            metadata={**(result.metadata or {}), "partition_passed": not bad}, severity=result.severity,
            description=result.description, blocking=blocking, partition=str(key),
            target_materialization_data=_target(context, check_key.asset_key, str(key)),
        )
    yield dg.Output(None, output_name="result")


def _target(context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey, partition: str):
    """The partition's latest materialisation, which the verdict is about: the UI counts a verdict as
    current only when it names that materialisation (else the partition shows no status at all).

    ``AssetCheckEvaluationTargetMaterializationData`` is the type of ``AssetCheckEvaluation``'s public
    ``target_materialization_data`` argument but is not exported by ``dagster``; Dagster's own
    ``AssetCheckResult`` builds the same pointer for a single-partition run. One query per partition.
    """
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition]), limit=1).records
    if not records:
        return None
    r = records[0]
    return AssetCheckEvaluationTargetMaterializationData(storage_id=r.storage_id, run_id=r.run_id,
                                                          timestamp=r.timestamp)
