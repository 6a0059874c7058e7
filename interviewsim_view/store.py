"""Read-only queries over a data root's Parquet tables, with DuckDB, one page at a time.

Why DuckDB: the tables are one Parquet file per partition (``<root>/<asset>/<P>/<M>.parquet``); a
page shows 50 rows out of up to millions, and DuckDB reads only the columns and row groups a query
needs, straight from the files, with parameterised SQL (values are bound, never spliced into the
text). Nothing here loads a whole table: every list query ends in ``LIMIT ? OFFSET ?`` and every
aggregate (counts, spreads, modal votes) is computed by DuckDB, which streams.

A personality's pages read only that personality's files (the file layout is known: the path
segment of an id is ``pipeline.storage.path_segment``), so a question view costs the same on a
2-person and on a 1,000-person data root. Identifiers that must appear in SQL text (table and
column names) come from the fixed maps below, never from a request.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from interviewsim_core.dataroot import as_root, is_local, local_path
from interviewsim_core.pipeline.storage import path_segment
from interviewsim_core.pipeline.tables import PER_METHOD

__all__ = ["PAGE_SIZE", "JUDGED", "Page", "Store"]

PAGE_SIZE = 50

JUDGED = {"cs": ("content_similarity", "score"), "fc": ("factual_consistency", "label")}
"""Browse key -> (table, value column) of the two per-question judgments."""

STATUSES = ("ok", "invalid", "failed")

LISTING_TTL_S = 5.0
"""How long a folder listing (and the filter menus derived from it) is reused: a run still writing
shows its new partitions within seconds, while a page does not list 1,500 files on every request."""


@dataclass(frozen=True)
class Page:
    """One page of rows and whether there is a next one (no COUNT(*) over the whole filter: paging
    asks for one row more than it shows)."""

    rows: list[dict[str, Any]]
    page: int
    has_next: bool


class Store:
    """The data root's tables for one explorer process.

    DuckDB connections are not shared across threads; Starlette runs sync endpoints in a thread
    pool, so each query takes a cursor of the one in-process database (cursors are per thread and
    share its caches, including the Parquet metadata cache).
    """

    def __init__(self, data_root: str | Path, memory_limit: str = "256MB", threads: int = 2):
        self.root = as_root(data_root)
        self.local = is_local(self.root)
        self._base: str = str(local_path(self.root)) if self.local else str(self.root).rstrip("/")
        self._con = duckdb.connect(config={"memory_limit": memory_limit, "threads": threads})
        self._con.execute("SET parquet_metadata_cache = true")
        self._lock = threading.Lock()
        self._listings: dict[tuple[str, str | None], tuple[float, list[str]]] = {}
        # (the method filter of ``files`` narrows a listing by file name, so it is not a key)
        self._results: dict[tuple[str, str], tuple[float, list[dict[str, Any]]]] = {}
        self._menus: dict[tuple[str, str], tuple[float, int, list[str]]] = {}
        if not self.local:
            # DuckDB reads any fsspec filesystem registered with it (s3fs, gcsfs, ...), offline too:
            # no httpfs extension download needed. The backend package is the user's install.
            self._con.register_filesystem(self.root.fs)

    @property
    def label(self) -> str:
        return self._base

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            return self._con.cursor()

    # -- files -------------------------------------------------------------------------------
    def files(self, asset: str, personality_id: str | None = None, method: str | None = None) -> list[str]:
        """The Parquet files of ``asset`` (of one personality, and of one method's ``<P>/<M>.parquet``
        partitions, when given), sorted; [] if none."""
        key = (asset, personality_id)
        hit = self._listings.get(key)
        now = time.monotonic()
        if hit and now - hit[0] < LISTING_TTL_S:
            found = hit[1]
        else:
            found = self._list(asset, personality_id)
            self._listings[key] = (now, found)
        if method is None or asset not in PER_METHOD:
            return found
        name = f"/{path_segment(method)}.parquet"
        return [f for f in found if f.endswith(name)]

    def _list(self, asset: str, personality_id: str | None) -> list[str]:
        if self.local:
            base = Path(self._base)
            folder = base / asset
            if personality_id is not None:
                seg = path_segment(personality_id)
                found = [folder / f"{seg}.parquet"] if (folder / f"{seg}.parquet").is_file() else []
                found += sorted((folder / seg).glob("*.parquet")) if (folder / seg).is_dir() else []
            else:
                found = _walk(folder)
                if not found and (base / f"{asset}.parquet").is_file():
                    found = [base / f"{asset}.parquet"]
            return [str(p) for p in found]
        fs = self.root.fs
        path = self.root.path.rstrip("/")
        proto = self._base.split("://", 1)[0]
        if personality_id is not None:
            seg = path_segment(personality_id)
            pats = [f"{path}/{asset}/{seg}.parquet", f"{path}/{asset}/{seg}/*.parquet"]
        else:
            pats = [f"{path}/{asset}/*.parquet", f"{path}/{asset}/*/*.parquet"]
        found = sorted({p for pat in pats for p in fs.glob(pat)})
        if not found and personality_id is None and fs.exists(f"{path}/{asset}.parquet"):
            found = [f"{path}/{asset}.parquet"]
        return [f"{proto}://{p}" for p in found]

    def warm(self, assets: Sequence[str]) -> None:
        """Read the footers of ``assets``' files once (DuckDB's Parquet metadata cache keeps them), so
        the first page over a large table does not pay for opening hundreds of files. Run in the
        background at start; a failure only means a colder first page."""
        for asset in assets:
            files = self.files(asset)
            if files:
                try:
                    self.query(f"SELECT count(*) AS n FROM {self.scan('files')}", {"files": files})
                except duckdb.Error:
                    pass

    def has(self, asset: str) -> bool:
        return bool(self.files(asset))

    # -- queries -----------------------------------------------------------------------------
    def query(self, sql: str, params: dict[str, Any] | None = None, remember: bool = False) -> list[dict[str, Any]]:
        """Rows of a parameterised query as dicts; user values go in ``params`` only.

        Partitions of one table share its schema, so a scan takes the first file's columns (unifying
        by name would read every file's footer first: a third of a second on 500 files). A data root
        whose partitions differ (written before a column was added) fails that bind; the query is
        then run again with the columns unified by name.

        ``remember``: an aggregate over a whole table (the disagreement ranking, premise counts) is
        kept for ``LISTING_TTL_S`` x 12 while the same files are listed, so paging through it or
        coming back does not recompute it; the rows returned are then shared (do not modify them)."""
        key = None
        if remember:
            key = (sql, repr(sorted((k, v) for k, v in (params or {}).items())))
            hit = self._results.get(key)
            if hit and time.monotonic() - hit[0] < 12 * LISTING_TTL_S:
                return hit[1]
        rows = self._run(sql, params)
        if key is not None:
            if len(self._results) >= 64:
                self._results.pop(next(iter(self._results)))
            self._results[key] = (time.monotonic(), rows)
        return rows

    def _run(self, sql: str, params: dict[str, Any] | None) -> list[dict[str, Any]]:
        cur = self._cursor()
        try:
            try:
                res = cur.execute(sql, params or {})
            except duckdb.Error:
                if _UNION not in sql:
                    raise
                res = cur.execute(sql.replace(_UNION, _UNION_BY_NAME), params or {})
            cols = [d[0] for d in res.description]
            return [dict(zip(cols, r)) for r in res.fetchall()]
        finally:
            cur.close()

    @staticmethod
    def scan(param: str) -> str:
        """SQL for reading the file list bound to ``$param``."""
        return f"read_parquet(${param}{_UNION})"

    def select(self, asset: str, sql: str, params: dict[str, Any] | None = None,
               personality_id: str | None = None, remember: bool = False) -> list[dict[str, Any]]:
        """Run ``sql`` with ``T`` bound to the asset's files (one personality's when given); [] when
        the asset has no files yet (a partial run)."""
        files = self.files(asset, personality_id)
        if not files:
            return []
        return self.query(sql.replace("{T}", self.scan("files")), {**(params or {}), "files": files}, remember)

    def columns(self, asset: str) -> set[str]:
        files = self.files(asset)
        if not files:
            return set()
        cur = self._cursor()
        try:
            res = cur.execute(f"SELECT * FROM {self.scan('files')} LIMIT 0", {"files": files})
            return {d[0] for d in res.description}
        finally:
            cur.close()

    def page(self, asset: str, sql: str, params: dict[str, Any], page: int,
             size: int = PAGE_SIZE) -> Page:
        """``sql`` (no LIMIT) with ``LIMIT size+1 OFFSET page*size`` appended."""
        page = max(0, page)
        rows = self.select(asset, sql + " LIMIT $limit OFFSET $offset",
                           {**params, "limit": size + 1, "offset": page * size})
        return Page(rows[:size], page, len(rows) > size)

    def distinct(self, asset: str, column: str) -> list[str]:
        """Distinct values of a low-cardinality id column (methods, judges), for the filter menus."""
        if column not in {"method", "judge", "personality_id", "artifact_kind", "trait"}:
            raise ValueError(f"not a filter column: {column}")
        n_files = len(self.files(asset))
        hit = self._menus.get((asset, column))
        if hit and hit[1] == n_files and time.monotonic() - hit[0] < 60 * LISTING_TTL_S:
            return hit[2]
        rows = self.select(asset, f"SELECT DISTINCT {column} AS v FROM {{T}} WHERE {column} IS NOT NULL ORDER BY 1")
        values = [str(r["v"]) for r in rows]
        self._menus[(asset, column)] = (time.monotonic(), n_files, values)
        return values

    def personalities(self) -> list[str]:
        """Personality ids from the split table's file names is not exact (hashed segments), so ask
        the id column; the split table has one small file per personality."""
        return self.distinct("heldout_split", "personality_id")

    def close(self) -> None:
        self._con.close()


_UNION = ", union_by_name = false"
_UNION_BY_NAME = ", union_by_name = true"


def _walk(folder: Path) -> list[Path]:
    """``folder/*.parquet`` and ``folder/*/*.parquet``, sorted, with ``os.scandir`` (several times
    faster than two ``Path.glob`` on a folder of hundreds of partitions)."""
    out: list[Path] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except FileNotFoundError:
        return out
    for e in entries:
        if e.is_dir():
            out += [Path(x.path) for x in sorted(os.scandir(e.path), key=lambda x: x.name)
                    if x.name.endswith(".parquet") and x.is_file()]
        elif e.name.endswith(".parquet"):
            out.append(Path(e.path))
    return out


def in_list(values: Sequence[str]) -> list[str]:
    """A Python list bound as a DuckDB list parameter (``= ANY($x)``)."""
    return [str(v) for v in values]
