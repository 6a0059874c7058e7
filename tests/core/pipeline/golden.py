"""A compact, deterministic fingerprint of every table a run wrote under its data root.

The golden test compares a run of the shipped sample with the offline model against a fingerprint
taken before the graph was refactored (``golden_sample.json``), row for row. Per table it keeps the
row count, one short hash per row (rows sorted by the table's key columns) and one hash per column,
so a mismatch names the table, the columns and the first rows that differ without the fixture having
to hold the tables themselves.

Excluded columns: ``*cache_hit`` (whether a row was served from the cache depends on what ran
before, not on the row's content) and ``*cache_key`` (the request's hash: it follows the cache key
format, and the requests themselves are pinned by the prompt tests).

Regenerate (only when a change of results is intended, and say so in the commit):
``python -m tests.core.pipeline.golden DATA_ROOT > tests/core/pipeline/golden_sample.json``
after a run of the sample into DATA_ROOT.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from interviewsim_core.pipeline.storage import read_frame
from interviewsim_core.pipeline.tables import KEY_COLUMNS

EXCLUDED_SUFFIXES = ("cache_hit", "cache_key", "constraint", "finish_reason", "truncated", "no_item")
# constraint / finish_reason / truncated: call columns added after the fingerprint was taken (issue 22);
# finish_reason is also None on a cache hit, like cache_hit a fact about how the row was served.
# no_item (MCQ counts in method_scores and the leaderboard): added after the fingerprint, 0 on the sample.
ROW_HASH_CHARS = 10


def _canon(value: Any) -> Any:
    """A JSON-able, order-stable form of one cell (floats by repr, NaN/None as null)."""
    if value is None:
        return None
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canon(v) for k, v in sorted(value.items())}
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else repr(value)
    if isinstance(value, int):
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_tables(root: Path) -> dict[str, pd.DataFrame]:
    """Every table under ``root``: ``<name>.parquet`` or all files of ``<name>/``, concatenated."""
    root = Path(root)
    out: dict[str, pd.DataFrame] = {}
    for path in sorted(root.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_file() and path.suffix == ".parquet":
            out[path.stem] = read_frame(path)
        elif path.is_dir():
            files = sorted(path.rglob("*.parquet"))
            if files:
                out[path.name] = pd.concat([read_frame(f) for f in files], ignore_index=True)
    return out


def fingerprint_table(name: str, df: pd.DataFrame) -> dict[str, Any]:
    cols = [c for c in df.columns if not c.endswith(EXCLUDED_SUFFIXES)]
    keys = [k for k in KEY_COLUMNS.get(name, ()) if k in df.columns] or cols
    ordered = df[cols].sort_values(keys, kind="stable").reset_index(drop=True)
    records = [[_canon(v) for v in row] for row in ordered.itertuples(index=False, name=None)]
    row_hashes = [_sha(json.dumps(r, sort_keys=True))[:ROW_HASH_CHARS] for r in records]
    col_hashes = {c: _sha(json.dumps([r[i] for r in records])) for i, c in enumerate(cols)}
    return {"rows": len(records), "keys": keys, "columns": col_hashes, "row_hashes": "".join(row_hashes)}


def fingerprint(root: Path) -> dict[str, dict[str, Any]]:
    return {name: fingerprint_table(name, df) for name, df in read_tables(root).items()}


def differences(expected: dict[str, dict], got: dict[str, dict], tables: dict[str, pd.DataFrame]) -> list[str]:
    """Human-readable differences: missing/extra tables, row counts, differing columns, first differing rows."""
    out: list[str] = []
    for name in sorted(set(expected) | set(got)):
        if name not in got:
            out.append(f"{name}: missing from this run")
            continue
        if name not in expected:
            out.append(f"{name}: not in the golden fixture")
            continue
        e, g = expected[name], got[name]
        if e["rows"] != g["rows"]:
            out.append(f"{name}: {g['rows']} rows, golden has {e['rows']}")
        cols = sorted(set(e["columns"]) | set(g["columns"]))
        bad = [c for c in cols if e["columns"].get(c) != g["columns"].get(c)]
        if bad:
            out.append(f"{name}: columns differ: {bad}")
        if e["row_hashes"] != g["row_hashes"]:
            n = ROW_HASH_CHARS
            er = [e["row_hashes"][i:i + n] for i in range(0, len(e["row_hashes"]), n)]
            gr = [g["row_hashes"][i:i + n] for i in range(0, len(g["row_hashes"]), n)]
            idx = [i for i in range(max(len(er), len(gr))) if i >= len(er) or i >= len(gr) or er[i] != gr[i]]
            df = tables[name].sort_values(g["keys"], kind="stable").reset_index(drop=True)
            shown = [df.loc[i, g["keys"]].to_dict() if i < len(df) else f"row {i}" for i in idx[:5]]
            out.append(f"{name}: {len(idx)} row(s) differ, first keys: {shown}")
    return out


if __name__ == "__main__":
    json.dump(fingerprint(Path(sys.argv[1])), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
