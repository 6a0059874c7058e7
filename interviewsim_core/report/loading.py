"""Read the evaluation's Parquet tables back from a data root, whatever subset of them exists.

A report is often built from a partial run (one method done, premise not run, a judge added
later), so a missing asset gives an empty frame with the table's columns instead of an error,
and the section that needs it says "not run".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..dataroot import as_root, forget_listings
from ..pipeline.storage import read_joined
from ..pipeline.tables import SCHEMAS, empty_frame, from_table

__all__ = ["REPORT_TABLES", "load_tables", "read_asset", "read_table"]

REPORT_TABLES: tuple[str, ...] = (
    "heldout_split", "fact_summary", "mcq_items", "reference_personality", "generations",
    "content_similarity", "factual_consistency", "generated_personality", "mcq_answers",
    "method_scores", "premise_verdicts", "ps_stability", "atomic_items", "training_personality",
)
"""Tables the report reads; the pipeline's ``leaderboard`` is recomputed from ``method_scores``. Every
table with a model-output status is among them, so the header's invalid count is the run summary's."""

UNREAD_COLUMNS: frozenset[str] = frozenset({
    "raw_output", "parse_error", "error", "explanation", "justification", "generated", "response", "summary",
    "cache_key", *(f"{p}_{c}" for p in ("pass1", "pass2") for c in ("raw_output", "parse_error", "error", "json",
                                                                      "cache_key"))})
"""Columns no report section reads: the text of every answer and judgment. Left on disk, the report
over a paper-sized data root holds scores and ids, not every answer (``bench_scale``'s memory figure:
the report was the run's peak). ``tests/core/report`` checks the report is the same either way."""


def _files(root: Path, asset: str) -> list[Path]:
    folder = root / asset
    files = sorted(folder.rglob("*.parquet")) if folder.is_dir() else []
    single = root / f"{asset}.parquet"
    if not files and single.is_file():
        files = [single]
    return files


def read_table(root: Path, asset: str, skip: frozenset[str] = frozenset(),
               reduce: Callable[[pa.Table], pa.Table] | None = None) -> pa.Table | None:
    """Every partition of ``asset`` under ``root`` joined in Arrow (``storage.read_joined``: compacted as read,
    each partition first reduced by ``reduce``), without the ``skip`` columns; None when no partition has a row."""
    return read_joined(_files(as_root(root), asset), skip, reduce)


def read_asset(root: Path, asset: str, skip: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Every partition of ``asset`` under ``root`` as one frame (empty frame with its columns if none),
    without the ``skip`` columns. The partitions are joined in Arrow (``read_table``) and converted to pandas
    once: one conversion per partition file was most of a report's time over thousands of small ones (issue 43)."""
    table = read_table(root, asset, skip)
    if table is not None:
        return from_table(table)
    if asset not in SCHEMAS:
        return pd.DataFrame()
    empty = empty_frame(asset)  # the same columns as a read partition: without the skipped ones
    return empty.drop(columns=[c for c in empty.columns if c in skip])


def load_tables(data_root: Path | str, tables: tuple[str, ...] = REPORT_TABLES,
                skip: frozenset[str] = UNREAD_COLUMNS) -> dict[str, pd.DataFrame]:
    """Table name -> all its partitions concatenated, without the ``skip`` columns (by default the
    answers' text, which no section reads); absent tables come back empty, never missing."""
    root = as_root(data_root)  # a folder or a URL (s3://...): see dataroot.py
    forget_listings(root)  # list what other workers wrote since, not what this process saw before
    return {name: read_asset(root, name, skip) for name in tables}
