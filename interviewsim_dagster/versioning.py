"""Data versions from content, one per partition, so "re-materialised, unchanged" is visible as such.

Why: the automation follows upstream *data-version changes*, not upstream materialisations
(``automation.FOLLOW_UPSTREAM``), and ``interviewsim run`` skips partitions whose inputs kept
their versions (``freshness``). Both need a version that stays the same when a step is re-run
on the same inputs with the same code: ``sha256(code version, table content)``, where the content
leaves out the columns that describe how a call went rather than what it said (``cache_hit``,
``attempts``, ``cost_usd``: a cache hit costs nothing but answers the same).

Dagster gives every partition of a multi-partition (single-run backfill) step the same data
version. So the step's output carries that version only when it covers one partition (the
version is then exact), and a step over several partitions records each partition's own version
as an ``AssetObservation`` right after its materialisations; Dagster's per-partition data-version
lookups (``AutomationCondition.data_version_changed``) read whichever event is latest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
import pandas as pd

DATA_VERSION_TAG = "dagster/data_version"
"""The event tag Dagster reads a data version from (``AssetObservation.data_version``)."""

OPERATIONAL_SUFFIXES = ("cache_hit", "cache_key", "attempts", "cost_usd")
"""Columns (also prefixed, ``pass1_cache_hit``) that say how a call went, not what the table holds."""


def content_version(df: pd.DataFrame, code_version: str | None) -> str:
    """``sha256(code version, content)`` of one partition's table, order of columns ignored."""
    keep = sorted(c for c in df.columns if not str(c).endswith(OPERATIONAL_SUFFIXES))
    body = df[keep].to_json(orient="split", index=False, default_handler=str, double_precision=12)
    digest = hashlib.sha256(f"{code_version or ''}\0{body}".encode("utf-8")).hexdigest()
    return digest[:24]


def versioned_output(context: dg.AssetExecutionContext, result: Any) -> Iterator[Any]:
    """The asset's ``Output`` (a DataFrame or ``{partition_key: DataFrame}``) with content data versions."""
    key = context.asset_key
    code = context.assets_def.code_versions_by_key.get(key)
    frames: Mapping[Any, pd.DataFrame] = result if isinstance(result, Mapping) else {None: result}
    versions = {k: content_version(df, code) for k, df in frames.items()}
    if len(versions) == 1:
        yield dg.Output(result, data_version=dg.DataVersion(next(iter(versions.values()))))
        return
    # Several partitions: the shared version Dagster stamps on each is a digest of all of them, and
    # every partition's own version follows as an observation (the latest event wins).
    joint = hashlib.sha256("".join(f"{k}={v};" for k, v in sorted(versions.items(), key=str)).encode()).hexdigest()
    yield dg.Output(result, data_version=dg.DataVersion(joint[:24]))
    for partition, version in versions.items():
        yield dg.AssetObservation(
            asset_key=key, partition=str(partition), tags={DATA_VERSION_TAG: version},
            description="Content version of this partition (a run over several partitions records each here).",
        )
