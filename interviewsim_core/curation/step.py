"""The curation as the first steps of the evaluation graph (``pipeline.steps``, group ``curation``), one
personality per partition, upstream of ``heldout_split``:

1. ``transcript_turns`` (no model): the personality's manifest rows, each file as ordered turns;
2. ``speaker_turns``: who speaks each turn (the rule, then the model for what it cannot place);
3. ``transcript_quality``: quality control's verdict per transcript, with the reviewer's decision applied;
4. ``qa_pairs``: the QA pairs of each kept transcript, with their raw spans;
5. ``qa_tags``: each pair's thematic tag and the personality's category;
6. ``prepared_input``: the document and its provenance (``<corpus>/<id>/``), ``categories.csv`` and
   ``curation_report.json``; its table is one row per transcript, kept or excluded with why.

Attribution comes before quality control (it reads the roles), unlike the issue's list. Each step is one of
``run.py``'s step functions, the ones ``interviewsim curate`` and ``plan.py`` compose in ``curate_with``: a
step rebuilds the personality's ``Outcome`` from the tables of the steps before it (``outcome_of``), runs its
function (its calls go through the graph's scheduler and gateway: cache, budget gate, batching across
personalities) and writes what that function added (``step_table``). Every table has one row per manifest
row of the personality (one row with an empty ``file`` when it has none) and, on every row, what the step
added for the whole personality: ``refused`` reasons, ``problems``, ``warnings`` (JSON lists) and ``calls``.
Nested values (a row of the manifest, turns, attributions, pairs, tags) are JSON text.

Its data version (``transcripts_version``, recorded on ``transcript_turns``, the step that reads the
files): the personality's manifest rows, the sha256 of each file they name and its reviewers' decisions.
``interviewsim run`` re-curates a personality whose version changed and no other
(``interviewsim_dagster/freshness.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import Problem
from ..pipeline.calls import PlannedCall
from . import run
from .models import Attribution, ManifestRow, QAPairDraft, Transcript, Turn
from .run import Curated, Outcome
from .stage import curation_model

if TYPE_CHECKING:
    from ..pipeline.config import EvalConfig

__all__ = ["assemble_step", "corpus_step", "curation_personalities", "ingest_step", "outcome_of",
           "plan_step", "step_table", "transcripts_version"]


def _value(v: Any) -> Any:
    """A cell as Python: None for a null (NaN after a Parquet round trip)."""
    return None if v is None or (isinstance(v, float) and v != v) else v


def _loads(text: Any, default: Any = None) -> Any:
    """A JSON cell's value; ``default`` for a null or empty cell (a step that did not reach the transcript)."""
    text = _value(text)
    return default if text is None or text == "" else json.loads(text)


def _turns_cols(outcome: Outcome, pid: str, c: Curated | None) -> dict[str, Any]:
    t = c.transcript if c is not None else None
    return {"date": c.row.date if c is not None else "", "row": c.row.model_dump_json() if c is not None else "",
            "format": t.format if t else None, "removed": json.dumps(t.removed) if t else None,
            "turns": json.dumps([turn.model_dump() for turn in t.turns]) if t else None,
            "excluded": json.dumps(c.excluded) if c is not None and c.excluded else None}


def _read_turns(outcome: Outcome, pid: str, c: Curated, r: Mapping[str, Any]) -> None:
    if _value(r["format"]) is not None:
        c.transcript = Transcript(file=c.row.file, format=r["format"], removed=_loads(r["removed"], {}),
                                  turns=tuple(Turn(**t) for t in _loads(r["turns"], [])))
    _read_excluded(c, r)


def _read_excluded(c: Curated, r: Mapping[str, Any]) -> None:
    found = _loads(r.get("excluded"))
    c.excluded = tuple(found) if found else None


def _roles_cols(outcome: Outcome, pid: str, c: Curated | None) -> dict[str, Any]:
    return {"attributions": json.dumps({k: a.model_dump() for k, a in c.attributions.items()}) if c else "{}",
            "roles": list(c.roles) if c else [], "excluded": json.dumps(c.excluded) if c is not None and c.excluded else None}


def _read_roles(outcome: Outcome, pid: str, c: Curated, r: Mapping[str, Any]) -> None:
    c.attributions = {k: Attribution(**a) for k, a in _loads(r["attributions"], {}).items()}
    c.roles = list(_value(r["roles"]) if _value(r["roles"]) is not None else [])
    _read_excluded(c, r)


def _quality_cols(outcome: Outcome, pid: str, c: Curated | None) -> dict[str, Any]:
    q = c.quality if c is not None else None
    rv = c.review if c is not None else None
    return {"quality_kept": q[0] if q else None, "quality_kind": q[1] if q else None,
            "quality_reason": q[2] if q else None, "review_decision": rv[0] if rv else None,
            "review_reason": rv[1] if rv else None, "kept": bool(c.keep) if c else False,
            "kind": c.kind if c else "", "reason": c.reason if c else ""}


def _read_quality(outcome: Outcome, pid: str, c: Curated, r: Mapping[str, Any]) -> None:
    if _value(r["quality_kept"]) is not None:
        c.quality = (bool(r["quality_kept"]), r["quality_kind"], r["quality_reason"])
    if _value(r["review_decision"]) is not None:
        c.review = (r["review_decision"], r["review_reason"])
    c.keep, c.kind, c.reason = bool(r["kept"]), r["kind"] or "", r["reason"] or ""


def _pairs_cols(outcome: Outcome, pid: str, c: Curated | None) -> dict[str, Any]:
    return {"pairs": json.dumps([p.model_dump() for p in c.pairs]) if c else "[]"}


def _read_pairs(outcome: Outcome, pid: str, c: Curated, r: Mapping[str, Any]) -> None:
    c.pairs = [QAPairDraft(**p) for p in _loads(r["pairs"], [])]


def _tags_cols(outcome: Outcome, pid: str, c: Curated | None) -> dict[str, Any]:
    cat, why = outcome.categories.get(pid, (None, None))
    return {"tags": json.dumps([list(t) for t in c.tags]) if c else "[]", "category": cat, "category_reason": why}


def _read_tags(outcome: Outcome, pid: str, c: Curated, r: Mapping[str, Any]) -> None:
    c.tags = [tuple(t) for t in _loads(r["tags"], [])]


def _read_category(outcome: Outcome, pid: str, r: Mapping[str, Any]) -> None:
    if _value(r["category_reason"]) is not None:  # set for every personality the tagging step reached
        outcome.categories[pid] = (_value(r["category"]), r["category_reason"])


_COLUMNS: dict[str, tuple[Callable[..., dict[str, Any]], Callable[..., None]]] = {
    "transcript_turns": (_turns_cols, _read_turns),
    "speaker_turns": (_roles_cols, _read_roles),
    "transcript_quality": (_quality_cols, _read_quality),
    "qa_pairs": (_pairs_cols, _read_pairs),
    "qa_tags": (_tags_cols, _read_tags),
}
"""Each step's own columns before ``prepared_input``, in graph order: written from a transcript's ``Curated`` and
read back onto it."""

_Mark = tuple[int, int, int, int]


def _mark(outcome: Outcome, pid: str) -> _Mark:
    """Where the personality's refusals, the problems, warnings and calls stood before a step."""
    return len(outcome.refused.get(pid, [])), len(outcome.problems), len(outcome.warnings), outcome.calls


def step_table(name: str, outcome: Outcome, pid: str, mark: _Mark) -> pd.DataFrame:
    """Step ``name``'s table of ``pid``: its columns per transcript and what it added since ``mark``."""
    r0, p0, w0, c0 = mark
    added = {"refused": json.dumps(outcome.refused.get(pid, [])[r0:]),
             "problems": json.dumps([dataclasses.asdict(p) for p in outcome.problems[p0:]]),
             "warnings": json.dumps(outcome.warnings[w0:]), "calls": outcome.calls - c0}
    cols = _COLUMNS[name][0]
    rows = [{"personality_id": pid, "file": c.row.file, **cols(outcome, pid, c), **added}
            for c in outcome.transcripts.get(pid, [])]
    return pd.DataFrame(rows or [{"personality_id": pid, "file": "", **cols(outcome, pid, None), **added}])


def outcome_of(pid: str, tables: Mapping[str, pd.DataFrame]) -> Outcome:
    """The personality's ``Outcome`` as the steps that wrote ``tables`` left it (each folded in graph order)."""
    outcome = Outcome()
    first = tables["transcript_turns"]
    items = [Curated(row=ManifestRow.model_validate_json(r)) for f, r in zip(first["file"], first["row"]) if f]
    if items:
        outcome.transcripts[pid] = items
    for name in _COLUMNS:  # graph order
        if name not in tables:
            continue
        records = tables[name].to_dict("records")
        for c, r in zip(items, [r for r in records if r["file"]], strict=True):
            _COLUMNS[name][1](outcome, pid, c, r)
        head = records[0]
        for why in _loads(head["refused"], []):
            outcome.refused.setdefault(pid, []).append(why)
        outcome.problems += [Problem(**p) for p in _loads(head["problems"], [])]
        outcome.warnings += _loads(head["warnings"], [])
        outcome.calls += int(head["calls"])
        if name == "qa_tags":
            _read_category(outcome, pid, head)
    return outcome


def ingest_step(cfg: EvalConfig, pid: str) -> pd.DataFrame:
    """``transcript_turns`` of ``pid``: ``run.ingest`` of its manifest rows."""
    outcome = run.ingest(cfg.transcripts, cfg.manifest, [pid])
    return step_table("transcript_turns", outcome, pid, (0, 0, 0, 0))


_ROUNDS: dict[str, tuple[Callable[[Outcome, EvalConfig], list[PlannedCall]],
                         Callable[[Outcome, EvalConfig, Mapping[Hashable, Any]], None]]] = {
    "speaker_turns": (lambda o, cfg: run.attribution_calls(o, curation_model(cfg), run.accepted_files(cfg.corpus)),
                      lambda o, cfg, res: run.attribute(o, res, curation_model(cfg), run.accepted_files(cfg.corpus))),
    "transcript_quality": (lambda o, cfg: run.quality_calls(o, curation_model(cfg)),
                           lambda o, cfg, res: run.judge_quality(o, res, cfg.corpus)),
    "qa_pairs": (lambda o, cfg: run.structuring_calls(o, curation_model(cfg)), lambda o, cfg, res: run.structure(o, res)),
    "qa_tags": (lambda o, cfg: run.tagging_calls(o, cfg.transcripts, curation_model(cfg)), lambda o, cfg, res: run.tag(o, res)),
}
"""Each model step's (calls, apply) pair of ``run.py`` step functions."""


def plan_step(name: str, cfg: EvalConfig, pid: str, inputs: Mapping[str, pd.DataFrame]) -> list[PlannedCall]:
    """The calls of model step ``name`` for ``pid``, from the tables of the steps before it."""
    return _ROUNDS[name][0](outcome_of(pid, inputs), cfg)


def assemble_step(name: str, cfg: EvalConfig, pid: str, planned: list[PlannedCall], results: Mapping[Hashable, Any],
                  inputs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Model step ``name``'s table of ``pid`` from its answers."""
    outcome = outcome_of(pid, inputs)
    mark = _mark(outcome, pid)
    outcome.calls += len(planned)
    _ROUNDS[name][1](outcome, cfg, results)
    return step_table(name, outcome, pid, mark)


def corpus_step(cfg: EvalConfig, pid: str, inputs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """``prepared_input`` of ``pid``: ``<corpus>/<pid>/prepared_input.json`` + provenance (atomically, nothing
    when the personality is refused) and its entries of ``categories.csv`` and ``curation_report.json``;
    returns its table."""
    outcome = outcome_of(pid, inputs)
    run.build_corpus(outcome, cfg.transcripts, curation_model(cfg), cfg.corpus, [pid])
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
    return sorted(_manifest_rows(str(cfg.manifest), _stamp(Path(cfg.manifest)))[0])


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
    return file_digest(folder / rel)


def file_digest(path: Path) -> str:
    """The sha256 of one file ("missing" when there is none), remembered while its size and mtime stay."""
    if not path.is_file():
        return "missing"
    return _file_sha256(str(path), _stamp(path))


@lru_cache(maxsize=65536)
def _file_sha256(path: str, _mtime_size: tuple[int, int]) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"
