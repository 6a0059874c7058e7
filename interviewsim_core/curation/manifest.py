"""The curation manifest: one row per transcript, CSV or JSON, every problem reported at once.

Fields (exactly these; any other column/key is refused so a typo such as ``person`` for
``person_name`` is caught, not ignored): ``file``, ``personality_id``, ``person_name``, ``date``, and
optional ``title`` (the transcript's title, as published), ``addressed_as`` (how the transcript's labels
address the person: "The President"), ``aliases`` (these two ``;``-separated in CSV, a list or
``;``-string in JSON), ``source_url``, ``profile_file``, ``long_profile_file``.

A row with a problem is left out and listed; its personality goes on with its other rows (one bad row
never sinks a person).

JSON is an array of row objects, or an object whose ``transcripts`` key holds that array (other keys
of that object, such as a description or a licence, are the manifest's own notes and ignored).
Problems are located by ``row N`` (1-based data row in CSV, array index + 1 in JSON).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Problem
from .models import ManifestRow

REQUIRED = ("file", "personality_id", "person_name", "date")
OPTIONAL = ("title", "addressed_as", "aliases", "source_url", "profile_file", "long_profile_file")
FIELDS = REQUIRED + OPTIONAL


def _rows(path: Path) -> tuple[list[dict[str, Any]], list[Problem]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(str(path), "$", "unreadable-manifest", f"cannot read the manifest: {exc}")]
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return [], [Problem(str(path), f"line {exc.lineno}", "manifest-not-json", exc.msg)]
        if isinstance(data, dict):
            data = data.get("transcripts")
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            return [], [Problem(str(path), "$", "manifest-shape",
                                "a JSON manifest is an array of row objects, or {\"transcripts\": [...]}")]
        return data, []
    reader = csv.DictReader(io.StringIO(text))
    extra = [c for c in (reader.fieldnames or []) if c not in FIELDS]
    if extra:
        return [], [Problem(str(path), "header", "unknown-field", f"unknown column(s) {extra}; allowed: {list(FIELDS)}")]
    return [dict(r) for r in reader], []


def _aliases(value: Any) -> tuple[str, ...] | None:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(a.strip() for a in value.split(";") if a.strip())
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return tuple(a.strip() for a in value if a.strip())
    return None


def _inside(folder: Path, rel: str, root: Path) -> str | None:
    """Why the file ``rel`` names cannot be used from ``folder`` (missing, a link out, absolute), or None when
    it lies inside. ``root``: ``folder.resolve()`` (one per manifest, not one per row)."""
    if Path(rel).is_absolute():
        return "absolute-path"
    path = folder / rel
    if not path.resolve().is_relative_to(root):
        return "outside-folder"
    if not path.is_file():
        return "missing-file"
    return None


_WHY = {"absolute-path": "is an absolute path; paths are relative to the transcripts folder",
        "outside-folder": "resolves outside the transcripts folder (a symbolic link or '..')",
        "missing-file": "names no regular file in the transcripts folder"}


@dataclass(frozen=True)
class Manifest:
    """The good rows, every problem (file + row + rule), warnings (absent profile files), and the
    personalities named by a row with a problem (their rows left out are listed with them)."""

    rows: list[ManifestRow]
    problems: list[Problem]
    warnings: list[str]
    with_problems: set[str]


def read_manifest(path: Path | str, folder: Path | str) -> Manifest:
    """Read and check the manifest against the transcripts folder; every problem listed at once."""
    path, folder = Path(path), Path(folder)
    root = folder.resolve()
    checked: dict[str, str | None] = {}  # a personality's profile file is named by each of its rows: resolved once

    def why_not(rel: str) -> str | None:
        if rel not in checked:
            checked[rel] = _inside(folder, rel, root)
        return checked[rel]

    raw_rows, problems = _rows(path)
    rows: list[ManifestRow] = []
    warnings: list[str] = []
    seen: dict[str, int] = {}
    warned: set[tuple[str, str]] = set()
    with_problems: set[str] = set()
    for n, raw in enumerate(raw_rows, start=1):
        where = f"row {n}"
        bad = len(problems)
        unknown = sorted(k for k in raw if k not in FIELDS)
        if unknown:
            problems.append(Problem(str(path), where, "unknown-field", f"unknown field(s) {unknown}; allowed: {list(FIELDS)}"))
        values: dict[str, Any] = {}
        for f in REQUIRED:
            v = raw.get(f)
            if not isinstance(v, str) or not v.strip():
                problems.append(Problem(str(path), where, "missing-field", f"{f} must be a non-blank string"))
            else:
                values[f] = v.strip()
        for f in OPTIONAL:
            v = raw.get(f)
            if f in ("aliases", "addressed_as"):
                a = _aliases(v)
                if a is None:
                    problems.append(Problem(str(path), where, "bad-field", f"{f} must be ';'-separated text or a list of strings"))
                else:
                    values[f] = a
            elif v is not None and not isinstance(v, str):
                problems.append(Problem(str(path), where, "bad-field", f"{f} must be a string"))
            elif v:
                values[f] = v.strip()
        if "date" in values:
            try:
                values["date"] = dt.date.fromisoformat(values["date"]).isoformat()
            except ValueError:
                problems.append(Problem(str(path), where, "bad-date", f"date {values['date']!r} is not an ISO date (YYYY-MM-DD)"))
        if "file" in values:
            key = values["file"]
            if key in seen:
                problems.append(Problem(str(path), where, "duplicate-row", f"file {key!r} is already listed in row {seen[key]}"))
            else:
                seen[key] = n
            why = why_not(key)
            if why:
                problems.append(Problem(str(folder / key), where, why, f"manifest file {key!r} {_WHY[why]}"))
        for f in ("profile_file", "long_profile_file"):
            if values.get(f):
                why = why_not(values[f])
                if why:
                    problems.append(Problem(str(folder / values[f]), where, why, f"{f} {values[f]!r} {_WHY[why]}"))
            elif values.get("personality_id") and (values["personality_id"], f) not in warned:
                warned.add((values["personality_id"], f))
                warnings.append(f"{path}: {values['personality_id']}: no {f} (first at {where}); its "
                                f"{'profile' if f == 'profile_file' else 'long_profile'} is empty unless another row gives one")
        if len(problems) == bad:
            rows.append(ManifestRow(**values))
        elif isinstance(raw.get("personality_id"), str) and raw["personality_id"].strip():
            with_problems.add(raw["personality_id"].strip())
    if not raw_rows and not problems:
        problems.append(Problem(str(path), "$", "empty-manifest", "the manifest lists no transcript"))
    return Manifest(rows, problems, warnings, with_problems)
