"""What one partition's table says at a glance: rows, call outcomes, tokens, cost, label counts, means
and a preview of its first rows. The UI shows it as the partition's metadata.

Why here, on the Arrow table as written: the summary is computed where the table is made, in whichever
process made it (a stage run's own scheduler, or ``interviewsim run``'s worker process, which sends it
with its report of the partition), so the command recording the partition neither reads the file back
nor converts it to pandas. Reading back, converting and summarising in pandas cost the recording about
9.5 ms a partition, more CPU than the worker spent making it (issue 43). On Arrow it is a fraction of a
millisecond, and it describes exactly what the Parquet file holds.

Pure: the Dagster side turns ``Preview`` into its table value (``interviewsim_dagster.batching``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..report.catalog import readable

FAILED_CALLS = "failed_calls"
"""Rows whose call got no answer: a partition with any is not up to date (``freshness.is_up_to_date``)."""

PREVIEW_ROWS = 25
"""Rows of a table's ``preview``: a partition's whole table in the common case (3-154 rows on the
sample corpus), bounded so an 11,000-partition backfill does not fill the event log with copies of
its Parquet files; ``preview_rows`` says how many of how many."""
PREVIEW_CELL = 60
"""Characters of a text cell in the preview (the rest is cut with an ellipsis)."""
PREVIEW_SKIP = frozenset({"contract", "contract_version", "constraint", "cache_key", "raw_output", "attempts",
                          "cached_prompt_tokens", "finish_reason", "truncated"})
"""Columns the preview leaves out (plain or with a premise pass's ``pass1_``/``pass2_`` prefix): call bookkeeping,
the same on every row or a copy of the parsed answer (``raw_output``; an invalid row's ``parse_error`` stays).
Every materialisation's event carries its preview, so these columns were a large part of the event log's bytes at
scale (issue 43); the Parquet file and the explorer keep them all."""
PREVIEW_IF_VARIED = ("personality_id", "method", "model")
"""Columns the preview keeps only when they differ between its rows: a partition's key already names its
personality and method (a leaderboard's rows keep theirs)."""
COUNTED = ("verdict", "label", "chosen_kind")
"""Columns whose values are counted (``<column>_counts``)."""


@dataclass(frozen=True)
class Preview:
    """The first rows of a table for reading: ``columns`` as (name, kind), kind one of bool, int, float,
    string; ``rows`` of plain values in that order (floats rounded, text cut, missing as ``None``)."""

    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[Any, ...], ...]


def summarise(table: pa.Table, means: Sequence[str] = ()) -> dict[str, Any]:
    """The partition's metadata from its table: ``rows``; for a table of model calls (a ``status``
    column, or ``<pass>_status`` on a premise verdict's passes) ``invalid_outputs``, ``failed_calls``,
    ``cache_hits``, ``model_rows`` and ``calls_made`` (rows that went to a provider, failed ones too);
    token and cost totals; ``<column>_counts`` of ``COUNTED``; ``mean_<column>`` of ``means``; and
    ``preview`` with ``preview_rows``."""
    names = table.column_names
    meta: dict[str, Any] = {"rows": table.num_rows}
    prefixes = [c[: -len("status")] for c in names if c == "status" or c.endswith("_status")]
    if prefixes:
        counts = {"invalid_outputs": 0, FAILED_CALLS: 0, "cache_hits": 0, "model_rows": 0}
        for p in prefixes:
            status = table[p + "status"]
            counts["invalid_outputs"] += _count_equal(status, "invalid")
            counts[FAILED_CALLS] += _count_equal(status, "failed")
            if p + "cache_hit" in names:
                counts["cache_hits"] += int(pc.sum(pc.cast(table[p + "cache_hit"], pa.bool_())).as_py() or 0)
            counts["model_rows"] += len(status) - status.null_count
        meta.update(counts)
        # Rows that went to a provider (failed ones too); the gateway's exact count is ``step_calls_made``.
        meta["calls_made"] = counts["model_rows"] - counts["cache_hits"]
    for name in ("prompt_tokens", "completion_tokens", "cost_usd"):
        cols = [p + name for p in prefixes if p + name in names] or ([name] if name in names else [])
        if cols:
            total = sum(_numbers(table[c]).sum() for c in cols)
            meta[name] = float(total) if name == "cost_usd" else int(total)
    for col in COUNTED:
        if col in names and table.num_rows:
            meta[f"{col}_counts"] = value_counts(table[col])
    for col in means:
        if col in names:
            values = _numbers(table[col])
            if len(values):
                meta[f"mean_{col}"] = readable(values.mean())
    meta["preview"] = preview(table)
    meta["preview_rows"] = f"{min(table.num_rows, PREVIEW_ROWS)} of {table.num_rows}"
    return meta


def summary_of(out: Any, written: pa.Table | None, means: Sequence[str] = ()) -> dict[str, Any] | None:
    """The summary of a step's partition: of the table its file holds when it wrote one (``written``), else of
    its output when that is a frame (a step writing files of its own); ``None`` for any other output."""
    if written is not None:
        return summarise(written, means)
    if isinstance(out, pd.DataFrame):
        return summarise(pa.Table.from_pandas(out, preserve_index=False), means)
    return None


def value_counts(column: pa.ChunkedArray) -> dict[str, int]:
    """Each value's count, most frequent first (ties in the order they first appear), missing ones as ``None``."""
    found = pc.value_counts(column).to_pylist()
    found.sort(key=lambda vc: -vc["counts"])  # stable: first appearance among equal counts
    return {str(vc["values"]): int(vc["counts"]) for vc in found}


def preview(table: pa.Table, rows: int = PREVIEW_ROWS) -> Preview:
    """The first ``rows`` rows, without the bookkeeping columns (``PREVIEW_SKIP``) and the ones the partition's
    key already says (``PREVIEW_IF_VARIED``); numbers and booleans keep their type, floats are rounded for
    reading (``catalog.readable``; the Parquet file keeps full precision), text is cut to ``PREVIEW_CELL``."""
    head = table.slice(0, rows)
    columns: list[tuple[str, str]] = []
    values: list[list[Any]] = []
    for name in head.column_names:
        if name.removeprefix("pass1_").removeprefix("pass2_") in PREVIEW_SKIP:
            continue
        col = head[name]
        if name in PREVIEW_IF_VARIED and pc.count_distinct(col, mode="all").as_py() <= 1:
            continue
        kind = _kind(col.type)
        columns.append((name, kind))
        values.append([_typed(v, kind) for v in col.to_pylist()])
    return Preview(tuple(columns), tuple(zip(*values)) if values else ((),) * head.num_rows)


def cell_text(value: Any) -> str:
    """A value as one short line of a table: lists joined with commas, whitespace collapsed, ``|`` escaped
    (markdown tables), cut to ``PREVIEW_CELL`` characters; missing as empty."""
    if isinstance(value, (list, tuple, np.ndarray)):  # an ndarray: a list column of a frame read from Parquet
        value = ", ".join(str(v) for v in value)
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    text = "" if missing else str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= PREVIEW_CELL else text[: PREVIEW_CELL - 1] + "\u2026"


def _count_equal(column: pa.ChunkedArray, value: str) -> int:
    return int(pc.sum(pc.equal(column, value)).as_py() or 0)


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """A column's numbers as floats, without missing ones and NaN (an empty array when it holds none)."""
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_boolean(column.type)):
        return np.array([], dtype=float)
    values = pc.cast(column, pa.float64()).to_numpy()
    return values[~np.isnan(values)]


def _kind(typ: pa.DataType) -> str:
    if pa.types.is_boolean(typ):
        return "bool"
    if pa.types.is_integer(typ):
        return "int"
    if pa.types.is_floating(typ):
        return "float"
    return "string"


def _typed(value: Any, kind: str) -> str | int | float | bool | None:
    """A cell as the preview keeps it: text cut for the page, NaN and missing as ``None`` (JSON has no NaN)."""
    if kind == "string":
        return cell_text(value)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return {"bool": bool, "int": int, "float": readable}[kind](value)
