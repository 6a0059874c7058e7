"""The corpus writer: one ``prepared_input.json`` per personality, provenance beside it, atomically.

Interviews are ordered by the manifest's ``date`` (ties: manifest row order) into ``sequence``
0..n-1; ids are ``<personality_id>_<date>_<nn>`` (nn counts that personality's transcripts of that
date) and ``<interview_id>_Q<kkk>``. ``person_name`` is not in the document (it is for attribution
and provenance only). A document is checked against the canonical schema (``schema.PreparedInput``,
strict) before anything is written; a personality with fewer than ``MIN_INTERVIEWS`` interviews that
kept pairs cannot be split chronologically and is reported, not written.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..atomic_files import atomic_write
from ..loader import DOCUMENT_NAME
from ..schema import SCHEMA_VERSION, PreparedInput
from .models import ManifestRow, QAPairDraft

MIN_INTERVIEWS = 2
"""The chronological split's minimum (INPUT_SCHEMA.md: each side keeps at least one interview)."""
PROVENANCE_NAME = "provenance.json"
CATEGORIES_NAME = "categories.csv"
REPORT_NAME = "curation_report.json"
LOCK_NAME = ".curation.lock"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def interview_ids(pid: str, rows: list[ManifestRow]) -> list[str]:
    """Ids in the given (date-sorted) order: ``<pid>_<date>_<nn>``."""
    seen: dict[str, int] = {}
    out = []
    for r in rows:
        seen[r.date] = seen.get(r.date, 0) + 1
        out.append(f"{pid}_{r.date}_{seen[r.date]:02d}")
    return out


def build_document(pid: str, profile: str, long_profile: str,
                   interviews: list[tuple[ManifestRow, list[QAPairDraft], list[tuple[str, ...]]]]) -> tuple[dict[str, Any], list[str]]:
    """The canonical document (as JSON data) and the interview id given to each input, in order.

    ``interviews`` must already be in chronological (date, row) order and hold only kept
    transcripts with at least one pair.

    Raises:
        pydantic.ValidationError: the document breaks the schema (a bug in an earlier step).
    """
    ids = interview_ids(pid, [row for row, _p, _t in interviews])
    doc = {
        "schema_version": SCHEMA_VERSION,
        "personality_id": pid,
        "personality": {"profile": profile, "long_profile": long_profile},
        "interviews": [
            {"interview_id": iid, "sequence": seq,
             "qa_pairs": [{"qa_id": f"{iid}_Q{k:03d}", "question": p.question, "response": p.response, "tags": list(tags)}
                          for k, (p, tags) in enumerate(zip(pairs, tag_rows, strict=True), start=1)]}
            for seq, (iid, (_row, pairs, tag_rows)) in enumerate(zip(ids, interviews))
        ],
    }
    PreparedInput.model_validate_json(json.dumps(doc))  # strict: the document is the schema's, or nothing is written
    return doc, ids


def _json_writer(data: Any):
    payload = (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    return lambda fh: fh.write(payload)


def write_personality(out: Path, pid: str, doc: dict[str, Any], provenance: dict[str, Any]) -> Path:
    """Write ``out/<pid>/prepared_input.json`` and ``provenance.json``, each atomically; returns the document path."""
    folder = out / pid
    atomic_write(folder / PROVENANCE_NAME, _json_writer(provenance))
    return atomic_write(folder / DOCUMENT_NAME, _json_writer(doc))


def write_categories(out: Path, categories: dict[str, str]) -> Path:
    """``categories.csv`` (personality_id, category): what ``interviewsim report --categories`` reads."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["personality_id", "category"])
    w.writerows(sorted(categories.items()))
    data = buf.getvalue().encode("utf-8")
    return atomic_write(out / CATEGORIES_NAME, lambda fh: fh.write(data))


@contextmanager
def corpus_lock(out: Path) -> Iterator[None]:
    """Held while a partition of the graph's curation rewrites the corpus-wide files (``categories.csv``,
    ``curation_report.json``): two personalities curated at once by separate runs would otherwise each
    read the old file and the later write would drop the other's rows."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK_NAME, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def update_categories(out: Path, categories: dict[str, str], personalities: set[str]) -> Path:
    """``categories.csv`` with the rows of ``personalities`` replaced by ``categories`` (the graph curates one
    personality per partition; the other personalities' rows stay). Call under ``corpus_lock``."""
    path = out / CATEGORIES_NAME
    kept: dict[str, str] = {}
    if path.is_file():
        for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
            if row.get("personality_id") and row["personality_id"] not in personalities:
                kept[row["personality_id"]] = row.get("category") or ""
    return write_categories(out, {**kept, **categories})


def update_report(out: Path, report: dict[str, Any], personalities: set[str], files: set[str]) -> Path:
    """``curation_report.json`` with what concerns ``personalities`` replaced by ``report``'s (the graph's
    curation step curates a partition at a time, and the explorer's review pages read this file whichever
    way the corpus was curated). ``files``: the transcripts of those personalities, whose earlier problems and
    warnings are dropped (a fixed file no longer shows its old problem). ``model_calls`` is left out: it
    counts one command's calls, which a merged report no longer is. Call under ``corpus_lock``."""
    path = out / REPORT_NAME
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    def others(key: str) -> dict[str, Any]:
        return {p: v for p, v in (old.get(key) or {}).items() if p not in personalities}

    def unrelated(text: str) -> bool:
        return not any(name in text for name in personalities | files)

    merged = {
        "written": dict(sorted({**others("written"), **report["written"]}.items())),
        "refused": dict(sorted({**others("refused"), **report["refused"]}.items())),
        "problems": [p for p in old.get("problems") or [] if unrelated(p)] + report["problems"],
        "warnings": [w for w in old.get("warnings") or [] if unrelated(w)] + report["warnings"],
        "categories": dict(sorted({**others("categories"), **report["categories"]}.items())),
        "personalities": dict(sorted({**others("personalities"), **report["personalities"]}.items())),
        "labels": dict(sorted({**others("labels"), **report["labels"]}.items())),
        "transcripts": sorted([r for r in old.get("transcripts") or [] if r.get("personality_id") not in personalities]
                              + report["transcripts"], key=lambda r: r["personality_id"]),
    }
    return write_report(out, merged)


def write_report(out: Path, report: dict[str, Any]) -> Path:
    """``curation_report.json``: every transcript with its verdict and reason, refused personalities and why."""
    return atomic_write(out / REPORT_NAME, _json_writer(report))
