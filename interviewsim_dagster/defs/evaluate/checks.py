"""The invalid-output-rate check, one per model-calling asset, with that asset's partitions.
An invalid output (contract broken after every re-ask) or a failed call is kept as a row and never
scored; this check makes a high share of them visible instead of letting a metric quietly rest on
fewer judgments. The threshold is ``EvalConfig.invalid_rate_threshold``.

A partition with no valid output although its inputs had rows (FC after an invalid fact summary,
the premise judge after invalid atomic items) fails the check too, as a 100% rate: 0 rows are not a
pass on nothing (``pipeline.expected.missing_outputs`` is the rule; its reason goes in the metadata).
"""


import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.expected import bad_outputs, missing_outputs, read_inputs, status_columns
from interviewsim_core.pipeline.storage import partition_path, read_frame
from interviewsim_core.pipeline.tables import schema_of

from ...assets_support import AssetTarget
from ...check_results import per_partition, run_frames
from ...factory import checked_config
from ..corpus.partitions import METHOD, PERSONALITY, dims_of

INVALID_RATE = "invalid_output_rate_under_threshold"


def invalid_rate(df: pd.DataFrame) -> tuple[int, int]:
    """(bad, total) over every model call recorded in ``df``, plain or per-pass (``pass1_status``...)."""
    return bad_outputs(df)


def build_invalid_rate_check(asset: AssetTarget, cfg: EvalConfig) -> dg.AssetChecksDefinition:
    """The check for one asset over the run's partitions. It reads their status columns only (``status_columns``
    of the table's schema), not the asset as a Dagster input: that loaded every column of every partition, the
    largest read of ``interviewsim run``'s recording (18% of its samples at 100 personalities, issue 43)."""
    name = asset.key.path[-1]
    statuses = status_columns(schema_of(name).names)

    @dg.asset_check(
        asset=asset.key,
        name=INVALID_RATE,
        partitions_def=asset.partitions_def,
        description=f"Share of invalid or failed model outputs in {name} is at most the configured threshold.",
        required_resource_keys={"eval_config"},
    )
    def _check(context: dg.AssetCheckExecutionContext):
        run_cfg = checked_config(context, cfg)
        threshold = run_cfg.invalid_rate_threshold
        if asset.partitions_def is None:  # an unpartitioned asset (user_premise_verdicts): one table
            frames = {name: read_frame(partition_path(run_cfg.data_root, name), columns=statuses)}
        else:
            frames = run_frames(context, {}, name, asset.partitions_def, run_cfg.data_root, columns=statuses)
        over: dict[str, float] = {}
        missing: dict[str, str] = {}
        bad_total = calls_total = 0
        for key, df in frames.items():
            bad, total = invalid_rate(df)
            bad_total += bad
            calls_total += total
            if total and bad / total > threshold:
                over[str(key)] = round(bad / total, 4)
            elif asset.partitions_def is not None and not total:  # no output at all: was one expected?
                dims = dims_of(asset.partitions_def, str(key))
                gap = missing_outputs(name, df, read_inputs(run_cfg.data_root, name, dims[PERSONALITY],
                                                            dims.get(METHOD)))
                if gap is not None:
                    over[str(key)] = 1.0
                    missing[str(key)] = gap.message()
        yield from per_partition(context, dg.AssetCheckResult(
            passed=not over,
            metadata={"invalid_or_failed": bad_total, "model_outputs": calls_total,
                      "rate": bad_total / calls_total if calls_total else 0.0, "threshold": threshold,
                      "partitions_over_threshold": dg.MetadataValue.json(over),
                      "expected_outputs_missing": dg.MetadataValue.json(missing)},
        ), over)

    return _check
