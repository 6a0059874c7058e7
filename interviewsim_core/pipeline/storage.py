"""Where each table partition lives on disk, and writing it atomically.

The layout is the one the Dagster IO manager uses too (``<root>/<asset>/<personality_id>.parquet``
or ``<root>/<asset>/<personality_id>/<method>.parquet``), so a direct run and an orchestrated run
produce interchangeable files. ``root`` may be a local folder or a URL (``s3://``, ``gs://``,
``file://``): ``dataroot.as_root`` gives both the same path API. Ids are user text: ``path_segment`` turns
each into a file name that no other id maps to (the exact id is also a column of every table).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..atomic_files import atomic_write
from ..dataroot import Root, as_root, forget_listings
from .tables import PER_METHOD, from_table, to_table

_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]")
_VERBATIM_MAX = 120
"""Longest id kept as its own file name; longer ones are cut and hashed (file names stop at 255 bytes)."""
_SLUG_MAX = 60
_HASH_SEP = "~"
"""Outside the verbatim alphabet, so a hashed name can never equal another id's verbatim name."""


def path_segment(value: str) -> str:
    """One path segment for an id, injective: distinct ids never share a file.

    An id made only of ``[A-Za-z0-9._+=@-]`` (and not ``.``/``..``, not too long) is its own name,
    (and not hidden: no leading ``.``) so ordinary ids stay readable. Any other id becomes a readable slug (unsafe characters as ``_``,
    cut to 60 characters) plus ``~`` and 16 hex digits of the SHA-256 of the exact id in UTF-8:
    ``A/B`` -> ``A_B~...``, while ``A_B`` stays ``A_B``; ``Zoë`` and ``Zoé`` (and their NFC/NFD forms)
    get different hashes. ``~`` never occurs in a verbatim name, so the two forms cannot collide.
    """
    if value and len(value) <= _VERBATIM_MAX and not value.startswith(".") and not _UNSAFE.search(value):
        return value
    slug = _UNSAFE.sub("_", value)[:_SLUG_MAX].strip(".") or "_"
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{slug}{_HASH_SEP}{digest}"


def partition_path(root: Path | str, asset: str, personality_id: str | None = None, method: str | None = None) -> Root:
    """The Parquet file of one asset partition.

    Raises:
        ValueError: a P x M table without a method, or a method given for a table that has none.
    """
    root = as_root(root)
    if personality_id is None:
        return root / f"{asset}.parquet"  # unpartitioned tables (the leaderboard)
    if (asset in PER_METHOD) != (method is not None):
        raise ValueError(f"table {asset!r} is {'per method' if asset in PER_METHOD else 'per personality'}; "
                         f"got method={method!r}")
    if method is None:
        return root / asset / f"{path_segment(personality_id)}.parquet"
    return root / asset / path_segment(personality_id) / f"{path_segment(method)}.parquet"


PARQUET_CODEC, PARQUET_LEVEL = "zstd", 6
"""zstd (level 6) instead of pyarrow's default snappy: the tables are mostly text (responses, raw
outputs, explanations), which zstd stores about a third smaller for ~2 ms more per partition write.
Every Parquet reader the project and its users rely on (pyarrow, pandas, DuckDB, Spark) reads zstd."""
SMALL_TABLE_BYTES, SMALL_TABLE_CODEC = 16_384, "snappy"
"""A table under this many bytes in memory is written with snappy: zstd's set-up per column chunk, not its
compression, is most of the write of a partition of a few rows, and on such a table it saves nothing. Over 600
partitions of 100 small personalities (median 1.2 KB in memory), zstd everywhere took 2.93 ms a write for 9.9 KB a
file, this rule 1.46 ms for 9.8 KB; a paper-shaped partition (120 generations, 190 premise verdicts) is far above it
and keeps zstd's third (issue 43)."""
_STATS_MAX_CHARS = 64
"""String columns get min/max statistics only when every value is this short (ids, labels, status):
Parquet would otherwise copy the smallest and largest response of every page and column chunk into
the file (a fifth of a text table's bytes), and nobody filters on the range of free text."""


def parquet_write(table: pa.Table, where) -> None:
    """``pq.write_table`` with the project's storage options: every Parquet file the project writes."""
    if table.nbytes < SMALL_TABLE_BYTES:
        pq.write_table(table, where, compression=SMALL_TABLE_CODEC, write_statistics=_statistics_columns(table))
        return
    pq.write_table(table, where, compression=PARQUET_CODEC, compression_level=PARQUET_LEVEL,
                   write_statistics=_statistics_columns(table))


def _statistics_columns(table: pa.Table) -> list[str]:
    keep = []
    for name, col in zip(table.column_names, table.columns):
        typ = col.type
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):
            longest = pc.max(pc.utf8_length(col)).as_py() if len(col) else 0
            if (longest or 0) > _STATS_MAX_CHARS:
                continue
        elif pa.types.is_nested(typ):
            continue  # lists of ids or texts: no statistics (nobody filters on a list's range)
        keep.append(name)
    return keep


def write_frame(df: pd.DataFrame, name: str, path: Path, sort_by: Sequence[str] = ()) -> Path:
    """Write ``df`` under table ``name``'s schema to ``path`` atomically (temp file + os.replace),
    its rows in ``sort_by`` order (stable, nulls last) when given.

    A reader, or a crash mid-write, never sees half a file: either the old partition or the new one.
    """
    table = _as_written(df, name, sort_by)
    return atomic_write(path, lambda fh: parquet_write(table, fh))


def write_table(df: pd.DataFrame, name: str, path: Path, sort_by: Sequence[str] = ()) -> pa.Table:
    """``write_frame``, returning the Arrow table written: what a reader of the file gets, from which the
    writer computes the partition's summary (``table_summary``) without reading the file back."""
    table = _as_written(df, name, sort_by)
    atomic_write(path, lambda fh: parquet_write(table, fh))
    return table


def _as_written(df: pd.DataFrame, name: str, sort_by: Sequence[str]) -> pa.Table:
    """``df`` as its file holds it. The sort is Arrow's, on the converted table: pandas' ``sort_values`` on a
    partition of a few rows cost about 0.4 ms against Arrow's 0.06, paid on every partition (issue 43)."""
    table = to_table(df, name)
    return table.sort_by([(c, "ascending") for c in sort_by]) if sort_by else table


def read_frame(path: Root, skip: Collection[str] = (), columns: Collection[str] | None = None) -> pd.DataFrame:
    """Read one partition file back as pandas (list columns as lists), without the ``skip`` columns, or only the
    ``columns`` it has of those given.

    ``skip`` lets a reader that needs a few columns of a big table (the report) leave the text it
    never reads on disk; a column the file does not have is simply not there to skip. ``columns`` is for a reader
    of a few columns of every partition (a check of call statuses): a 30-column partition read whole and
    converted to pandas cost about 4 ms, most of it for columns the reader never looked at.
    """
    return from_table(read_arrow(path, skip, columns))


def read_arrow(path: Root, skip: Collection[str] = (), columns: Collection[str] | None = None) -> pa.Table:
    """One partition file as an Arrow table, without the ``skip`` columns (only the ``columns`` it has of those
    given): for readers that join many partitions before converting them to pandas once (``read_joined``)."""
    def read(source) -> pa.Table:
        if not skip and columns is None:
            return pq.read_table(source)
        pf = pq.ParquetFile(source)
        return pf.read(columns=[c for c in pf.schema_arrow.names
                                if c not in skip and (columns is None or c in columns)])

    if isinstance(path, (Path, str)):
        return read(path)
    forget_listings(path)  # the object may have been replaced by another worker since we listed it
    with path.open("rb") as fh:  # a UPath: read through its fsspec filesystem
        return read(fh)


READ_THREADS = 4
"""Partition files read at once by ``read_joined``: opening and decoding a Parquet file releases the GIL, and the
report over 1,000 personalities reads 73,000 of them (docs/PERFORMANCE.md, "The report at 1,000")."""
COMPACT_EVERY = 256
"""Partitions ``read_joined`` copies into one contiguous table at a time."""


def read_joined(paths: Sequence[Root], skip: Collection[str] = (),
                reduce: Callable[[pa.Table], pa.Table] | None = None,
                columns: Collection[str] | None = None) -> pa.Table | None:
    """The partition files ``paths`` joined in Arrow in their order, without the ``skip`` columns (only the ``columns``
    each has of those given), each first
    reduced by ``reduce`` (a filter, a measure of a text the caller does not keep), so memory follows the
    reduction; None when no file has a row. A file written by an older schema gets the newer columns as nulls.

    Every ``COMPACT_EVERY`` files, read ``READ_THREADS`` at a time, are copied into one table: a partition of a
    few rows holds a padded buffer per column, so many held at once cost far more than their rows. 11,000
    one-row ``method_scores`` partitions held apart took 830 MB for a 5 MB table (the leaderboard at 1,000
    personalities), and 7,300 partitions made the report over 100 personalities 189 MB above its imports for
    10 MB of frames (issue 43)."""
    def read(path: Root) -> pa.Table:
        t = read_arrow(path, skip, columns)
        return t if reduce is None else reduce(t)

    tables: list[pa.Table] = []
    with ThreadPoolExecutor(READ_THREADS) as pool:
        for i in range(0, len(paths), COMPACT_EVERY):
            batch = [t for t in pool.map(read, paths[i:i + COMPACT_EVERY]) if t.num_rows]
            if batch:
                tables.append(pa.concat_tables(batch, promote_options="permissive").combine_chunks())
    return pa.concat_tables(tables, promote_options="permissive") if tables else None
