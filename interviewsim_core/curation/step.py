"""The curation as the first step of the evaluation graph (``pipeline.steps``: ``prepared_input``), one
personality per partition, upstream of ``heldout_split``.

Why a replay: the curation (``run.curate_with``) is up to four rounds of model calls (attribution,
quality control, QA structuring, tagging), each planned from the answers of the one before. The step
table's model steps hand their calls to the scheduler as ``plan`` (the first round), ``replan`` (the
next round, from every answer so far) and ``assemble``. Each of the three runs the personality's
curation again with the answers so far (ingest and the rules are cheap and deterministic) and stops at
the first round whose answers it lacks: those calls are the next round. So every call goes through the
graph's scheduler and gateway (cache, budget gate, batching across personalities) and the curation is
defined once, for ``interviewsim curate`` and the graph alike.

Its data version (``transcripts_version``): the personality's manifest rows, the sha256 of each file
they name and its reviewers' decisions. ``interviewsim run`` re-curates a personality whose version
changed and no other (``interviewsim_dagster/freshness.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..pipeline.calls import PlannedCall

if TYPE_CHECKING:
    from ..pipeline.config import EvalConfig
    from .run import Outcome

__all__ = ["curate_personality", "curation_personalities", "next_calls", "transcripts_version", "transcripts_versions"]


class _Needs(Exception):
    """The replay reached a round whose answers it does not have yet: these are its calls."""

    def __init__(self, calls: list[PlannedCall]):
        super().__init__(f"{len(calls)} call(s) not answered yet")
        self.calls = calls


def _replay(results: Mapping[Hashable, Any]):
    def ask(planned: list[PlannedCall]) -> dict[Hashable, Any]:
        missing = [p for p in planned if p.key not in results]
        if missing:
            raise _Needs(missing)
        return {p.key: results[p.key] for p in planned}

    return ask


def _curate(cfg: EvalConfig, pid: str, results: Mapping[Hashable, Any], write: bool) -> Outcome:
    from .run import curate_with
    from .stage import curation_model

    return curate_with(cfg.transcripts, cfg.manifest, _replay(results), curation_model(cfg), out=cfg.corpus,
                       personalities=[pid], write=write)


def next_calls(cfg: EvalConfig, pid: str, results: Mapping[Hashable, Any]) -> list[PlannedCall]:
    """The next round of the personality's curation given the answers so far; ``[]`` when every round is answered."""
    try:
        _curate(cfg, pid, results, write=False)
    except _Needs as need:
        return need.calls
    return []


def curate_personality(cfg: EvalConfig, pid: str, results: Mapping[Hashable, Any]) -> pd.DataFrame:
    """Curate one personality from its answers: ``<corpus>/<pid>/prepared_input.json`` + provenance (atomically,
    nothing when the personality is refused) and its row of ``categories.csv``; returns its table."""
    try:
        outcome = _curate(cfg, pid, results, write=True)
    except _Needs as need:  # the scheduler assembles only after the last round: a bug, not an input problem
        raise RuntimeError(f"curation of {pid}: assembled with {len(need.calls)} call(s) unanswered") from None
    return table_of(outcome, pid, Path(cfg.transcripts))


def table_of(outcome: Outcome, pid: str, folder: Path) -> pd.DataFrame:
    """One row per manifest row of ``pid`` (one empty-file row when it has none), with the personality's
    outcome on every row: ``written``, or ``refused`` with why and every input problem."""
    from .corpus import sha256_of

    refused = "; ".join(outcome.refused.get(pid, []))
    problems = "\n".join(str(p) for p in outcome.problems)
    common = {"written": pid in outcome.written, "refused": refused, "problems": problems}
    rows = []
    for r in (r for r in outcome.table() if r["personality_id"] == pid):
        path = folder / r["file"]
        rows.append({"personality_id": pid, "file": r["file"],
                     "sha256": sha256_of(path) if path.is_file() else "", "date": r["date"],
                     "format": r["format"] or "", "turns": r["turns"], "kept": r["kept"], "kind": r["kind"],
                     "reason": r["reason"], "pairs": r["pairs"], "removed": json.dumps(r["removed"], sort_keys=True),
                     **common})
    if not rows:
        rows.append({"personality_id": pid, "file": "", "sha256": "", "date": "", "format": "", "turns": 0,
                     "kept": False, "kind": "", "reason": "", "pairs": 0, "removed": "{}", **common})
    return pd.DataFrame(rows)


def curation_personalities(cfg: EvalConfig) -> list[str]:
    """The personality ids the manifest names (its rows with problems too: their partition says why they are
    refused), sorted: the partitions of the curation step."""
    from .manifest import _rows

    raw, _problems = _rows(Path(cfg.manifest))
    return sorted({r["personality_id"].strip() for r in raw
                   if isinstance(r.get("personality_id"), str) and r["personality_id"].strip()})


def transcripts_versions(transcripts: Path | str, manifest: Path | str, corpus: Path | str) -> dict[str, str]:
    """personality id -> ``transcripts_version`` of each personality the manifest names."""
    by_pid, _problems = _manifest_rows(str(manifest), _stamp(Path(manifest)))
    return {pid: transcripts_version(transcripts, manifest, corpus, pid) for pid in sorted(by_pid)}


def transcripts_version(transcripts: Path | str, manifest: Path | str, corpus: Path | str, pid: str) -> str:
    """Hash of what ``pid``'s curation reads besides code and model: its manifest rows (in manifest order, which
    breaks date ties; not their row numbers), the sha256 of every file they name (transcripts, profiles) and the
    reviewers' decisions on its files; "" for a personality the manifest does not name.

    Called for each curation partition when a run checks what is up to date, so it reads only this personality's
    files: the manifest, the decisions and each file's sha256 are remembered while their size and mtime stay."""
    by_pid, problems = _manifest_rows(str(manifest), _stamp(Path(manifest)))
    if pid not in by_pid:
        return ""
    review_csv = Path(corpus) / "review.csv"
    decisions = _decisions(str(corpus), _stamp(review_csv))
    folder = Path(transcripts)
    rows = []
    for r in by_pid[pid]:
        names = [r.get(f) for f in ("file", "profile_file", "long_profile_file")]
        digests = [_digest(folder, f) if isinstance(f, str) and f else "" for f in names]
        rows.append([r, digests, decisions.get(str(r.get("file")))])
    return hashlib.sha256(json.dumps([list(problems), rows], sort_keys=True, default=str).encode("utf-8")).hexdigest()[:24]


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, -1)
    return (st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _manifest_rows(manifest: str, _mtime_size: tuple[int, int]) -> tuple[dict[str, list[dict[str, Any]]], tuple[str, ...]]:
    """The manifest's raw rows by personality id, and its problems (as text)."""
    from .manifest import _rows

    raw, problems = _rows(Path(manifest))
    by_pid: dict[str, list[dict[str, Any]]] = {}
    for r in raw:
        pid = r.get("personality_id")
        if isinstance(pid, str) and pid.strip():
            by_pid.setdefault(pid.strip(), []).append(r)
    return by_pid, tuple(str(p) for p in problems)


@lru_cache(maxsize=8)
def _decisions(corpus: str, _mtime_size: tuple[int, int]) -> dict[str, Any]:
    from .review import read_decisions

    return read_decisions(corpus)[0]


def _digest(folder: Path, rel: str) -> str:
    path = folder / rel
    if not path.is_file():
        return "missing"
    return _file_sha256(str(path), _stamp(path))


@lru_cache(maxsize=65536)
def _file_sha256(path: str, _mtime_size: tuple[int, int]) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"
