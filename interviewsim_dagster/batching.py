"""Per-partition metadata of a step's table (rows, invalid and failed outputs, tokens, cost, preview).

A stage run reports these per partition from the rows' own call columns; the step's totals over the
whole run (``step_*``) come from the scheduler's counts (``engine.run_stage``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import dagster as dg
import numpy as np
import pandas as pd

from interviewsim_core.report.catalog import readable


FAILED_CALLS = "failed_calls"
"""Rows whose call got no answer: a partition with any is not up to date (``freshness.is_up_to_date``)."""

_PREVIEW_ROWS = 25
"""Rows of a table's ``preview``: a partition's whole table in the common case (3-154 rows on the
sample corpus), bounded so an 11,000-partition backfill does not fill the event log with copies of
its Parquet files; ``preview_rows`` says how many of how many."""
_PREVIEW_CELL = 60
_PREVIEW_SKIP = frozenset({"contract", "contract_version", "constraint", "cache_key", "raw_output", "attempts",
                           "cached_prompt_tokens", "finish_reason", "truncated"})
"""Columns the preview leaves out (plain or with a premise pass's ``pass1_``/``pass2_`` prefix): call bookkeeping,
the same on every row or a copy of the parsed answer (``raw_output``; an invalid row's ``parse_error`` stays).
Every materialisation's event carries its preview, so these columns were a large part of the event log's bytes at
scale (issue 43); the Parquet file and the explorer keep them all."""
_PREVIEW_IF_VARIED = ("personality_id", "method", "model")
"""Columns the preview keeps only when they differ between its rows: a partition's key already names its
personality and method (a leaderboard's rows keep theirs)."""


def table_metadata(df: pd.DataFrame, *, means: Sequence[str] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"rows": len(df)}
    # Call columns are plain on most tables and prefixed per pass (pass1_, pass2_) on premise verdicts.
    prefixes = [c[: -len("status")] for c in df.columns if c == "status" or c.endswith("_status")]
    if prefixes:
        counts = {"invalid_outputs": 0, FAILED_CALLS: 0, "cache_hits": 0, "model_rows": 0}
        for p in prefixes:
            status = df[p + "status"]
            counts["invalid_outputs"] += int((status == "invalid").sum())
            counts[FAILED_CALLS] += int((status == "failed").sum())
            counts["cache_hits"] += int(df[p + "cache_hit"].fillna(False).astype(bool).sum())
            counts["model_rows"] += int(status.notna().sum())
        meta.update(counts)
        # Rows that went to a provider (failed ones too); the gateway's exact count is ``step_calls_made``.
        meta["calls_made"] = counts["model_rows"] - counts["cache_hits"]
    for name in ("prompt_tokens", "completion_tokens", "cost_usd"):
        cols = [p + name for p in prefixes if p + name in df.columns] or ([name] if name in df.columns else [])
        if cols:
            total = sum(pd.to_numeric(df[c], errors="coerce").fillna(0).sum() for c in cols)
            meta[name] = float(total) if name == "cost_usd" else int(total)
    for col in ("verdict", "label", "chosen_kind"):
        if col in df.columns and len(df):
            meta[f"{col}_counts"] = {str(k): int(v) for k, v in df[col].value_counts(dropna=False).items()}
    for col in means:
        if col in df.columns:
            values = pd.to_numeric(df[col], errors="coerce").dropna()
            if len(values):
                meta[f"mean_{col}"] = readable(values.mean())
    meta["preview"] = preview_table(df)
    meta["preview_rows"] = f"{min(len(df), _PREVIEW_ROWS)} of {len(df)}"
    return meta


def preview_table(df: pd.DataFrame, rows: int = _PREVIEW_ROWS) -> dg.TableMetadataValue:
    """The first rows as a table value (the asset page shows it inline, a markdown value needs a click);
    numbers and booleans keep their type, floats rounded for reading (``catalog.readable``; the Parquet
    file keeps full precision), text is cut to ``_PREVIEW_CELL`` characters, bookkeeping columns left out
    (``_PREVIEW_SKIP``)."""
    head = df.head(rows)
    head = head[[c for c in head.columns if str(c).removeprefix("pass1_").removeprefix("pass2_") not in _PREVIEW_SKIP
                 and not (c in _PREVIEW_IF_VARIED and head[c].nunique(dropna=False) <= 1)]]
    kinds = {c: _kind(head[c]) for c in head.columns}
    # Column by column (``tolist``), not ``itertuples``: on Arrow-backed columns that indexes every
    # cell through pandas, 4 ms a partition, paid by the command for each one the worker reports.
    columns = [[_typed(v, kinds[c]) for v in head[c].tolist()] for c in head.columns]
    names = [str(c) for c in head.columns]
    records = [dg.TableRecord(dict(zip(names, values))) for values in zip(*columns)]
    return dg.MetadataValue.table(records, schema=dg.TableSchema(
        columns=[dg.TableColumn(str(c), kinds[c]) for c in head.columns]))


def _kind(col: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(col):
        return "bool"
    if pd.api.types.is_integer_dtype(col):
        return "int"
    if pd.api.types.is_float_dtype(col):
        return "float"
    return "string"


def _typed(value: Any, kind: str) -> str | int | float | bool | None:
    """A cell as the table value stores it: NaN/NA as empty (JSON has no NaN), text cut for the page."""
    if kind == "string":
        return _cell(value)
    if value is None or pd.isna(value):
        return None
    return {"bool": bool, "int": int, "float": readable}[kind](value)


def preview_markdown(df: pd.DataFrame, rows: int = 10) -> str:
    """The first rows as a markdown table, long cells cut so the UI stays readable."""
    if df.empty:
        return "_no rows_"
    head = df.head(rows).copy()
    for col in head.columns:
        head[col] = [_cell(v) for v in head[col]]
    return head.to_markdown(index=False)


def _cell(value: Any) -> str:
    if isinstance(value, (list, tuple, np.ndarray)):
        value = ", ".join(str(v) for v in value)
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    text = "" if missing else str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= _PREVIEW_CELL else text[: _PREVIEW_CELL - 1] + "\u2026"
