"""Where each table partition lives on disk, and writing it atomically.

The layout is the one the Dagster IO manager uses too (``<root>/<asset>/<personality_id>.parquet``
or ``<root>/<asset>/<personality_id>/<method>.parquet``), so a direct run and an orchestrated run
produce interchangeable files. ``root`` may be a local folder or a URL (``s3://``, ``gs://``,
``file://``): ``dataroot.as_root`` gives both the same path API.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from ..atomic_files import atomic_write
from ..dataroot import Root, as_root, forget_listings
from .tables import PER_METHOD, from_table, to_table

_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]")


def _segment(value: str) -> str:
    """A key made safe as one path segment (ids come from user files; '/' or '..' must not escape the root)."""
    safe = _UNSAFE.sub("_", value)
    return safe if safe not in ("", ".", "..") else f"_{safe}_"


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
        return root / asset / f"{_segment(personality_id)}.parquet"
    return root / asset / _segment(personality_id) / f"{_segment(method)}.parquet"


def write_frame(df: pd.DataFrame, name: str, path: Path) -> Path:
    """Write ``df`` under table ``name``'s schema to ``path`` atomically (temp file + os.replace).

    A reader, or a crash mid-write, never sees half a file: either the old partition or the new one.
    """
    table = to_table(df, name)
    return atomic_write(path, lambda fh: pq.write_table(table, fh))


def read_frame(path: Root) -> pd.DataFrame:
    """Read one partition file back as pandas (list columns as lists)."""
    if isinstance(path, (Path, str)):
        return from_table(pq.read_table(path))
    forget_listings(path)  # the object may have been replaced by another worker since we listed it
    with path.open("rb") as fh:  # a UPath: read through its fsspec filesystem
        return from_table(pq.read_table(fh))
