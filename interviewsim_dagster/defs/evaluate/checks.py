"""The invalid-output-rate check, one per model-calling asset, with that asset's partitions.
An invalid output (contract broken after every re-ask) or a failed call is kept as a row and never
scored; this check makes a high share of them visible instead of letting a metric quietly rest on
fewer judgments. The threshold is ``EvalConfig.invalid_rate_threshold``.
"""


import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.config import EvalConfig

from ...assets_support import AssetTarget
from ...check_results import per_partition
from ...factory import checked_config

INVALID_RATE = "invalid_output_rate_under_threshold"


def invalid_rate(df: pd.DataFrame) -> tuple[int, int]:
    """(bad, total) over every model call recorded in ``df``, plain or per-pass (``pass1_status``...)."""
    cols = [c for c in df.columns if c == "status" or c.endswith("_status")]
    bad = total = 0
    for c in cols:
        s = df[c].dropna()
        total += len(s)
        bad += int((s != "ok").sum())
    return bad, total


def build_invalid_rate_check(asset: AssetTarget, cfg: EvalConfig) -> dg.AssetChecksDefinition:
    """The check for one asset; its single non-resource parameter is the asset itself (all run partitions)."""
    name = asset.key.path[-1]

    @dg.asset_check(
        asset=asset.key,
        name=INVALID_RATE,
        partitions_def=asset.partitions_def,
        description=f"Share of invalid or failed model outputs in {name} is at most the configured threshold.",
        required_resource_keys={"eval_config"},
    )
    def _check(context: dg.AssetCheckExecutionContext, frames):
        threshold = checked_config(context, cfg).invalid_rate_threshold
        if isinstance(frames, pd.DataFrame):  # an unpartitioned asset (user_premise_verdicts) loads one table
            frames = {name: frames}
        over: dict[str, float] = {}
        bad_total = calls_total = 0
        for key, df in frames.items():
            bad, total = invalid_rate(df)
            bad_total += bad
            calls_total += total
            if total and bad / total > threshold:
                over[str(key)] = round(bad / total, 4)
        yield from per_partition(context, dg.AssetCheckResult(
            passed=not over,
            metadata={"invalid_or_failed": bad_total, "model_outputs": calls_total,
                      "rate": bad_total / calls_total if calls_total else 0.0, "threshold": threshold,
                      "partitions_over_threshold": dg.MetadataValue.json(over)},
        ), over)

    return _check
