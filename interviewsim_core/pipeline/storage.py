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
from collections.abc import Collection
from pathlib import Path

import pandas as pd
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


def write_frame(df: pd.DataFrame, name: str, path: Path) -> Path:
    """Write ``df`` under table ``name``'s schema to ``path`` atomically (temp file + os.replace).

    A reader, or a crash mid-write, never sees half a file: either the old partition or the new one.
    """
    table = to_table(df, name)
    return atomic_write(path, lambda fh: pq.write_table(table, fh))


def read_frame(path: Root, skip: Collection[str] = ()) -> pd.DataFrame:
    """Read one partition file back as pandas (list columns as lists), without the ``skip`` columns.

    ``skip`` lets a reader that needs a few columns of a big table (the report) leave the text it
    never reads on disk; a column the file does not have is simply not there to skip.
    """
    def read(source) -> pd.DataFrame:
        if not skip:
            return from_table(pq.read_table(source))
        pf = pq.ParquetFile(source)
        return from_table(pf.read(columns=[c for c in pf.schema_arrow.names if c not in skip]))

    if isinstance(path, (Path, str)):
        return read(path)
    forget_listings(path)  # the object may have been replaced by another worker since we listed it
    with path.open("rb") as fh:  # a UPath: read through its fsspec filesystem
        return read(fh)
