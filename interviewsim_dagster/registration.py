"""Which corpus files may become personality partitions: shared by the sensor and ``interviewsim register``.

Validation itself is core's (``loader.validate_paths``); this module only walks the corpus one
document at a time so that one broken file is reported without blocking the good ones, and keeps a
fingerprint per file so a sensor tick re-validates only what changed (a 7 MB corpus every 30 s
would otherwise be re-parsed forever).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from interviewsim_core.errors import Problem
from interviewsim_core.input_rules import personality_key
from interviewsim_core.loader import duplicate_personality, load_document, validate_paths

DOCUMENT_NAME = "prepared_input.json"


@dataclass(frozen=True)
class FileState:
    """What a file looked like when last validated, and what it yielded."""

    fingerprint: str
    personality_id: str | None
    problems: tuple[str, ...] = ()


@dataclass
class ScanResult:
    """Valid personalities (id -> file) and the problems of every invalid file, in corpus order."""

    valid: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    states: dict[str, FileState] = field(default_factory=dict)

    def cursor(self) -> str:
        """The sensor cursor: per-file fingerprints and verdicts, JSON so the UI can show it."""
        return json.dumps(
            {f: [s.fingerprint, s.personality_id, list(s.problems)] for f, s in sorted(self.states.items())}
        )


def parse_cursor(cursor: str | None) -> dict[str, FileState]:
    if not cursor:
        return {}
    try:
        raw = json.loads(cursor)
        return {f: FileState(v[0], v[1], tuple(v[2])) for f, v in raw.items()}
    except (ValueError, TypeError, IndexError, AttributeError):
        # A cursor from an older format is only an optimisation: start over rather than fail the sensor.
        return {}


def _candidates(corpus: Path) -> list[Path]:
    """One path per would-be personality: a file, a folder holding the document, or each sub-folder."""
    if corpus.is_file() or (corpus / DOCUMENT_NAME).is_file():
        return [corpus if corpus.is_file() else corpus / DOCUMENT_NAME]
    if not corpus.is_dir():
        return []
    subs = sorted(e for e in corpus.iterdir() if e.is_dir() and not e.name.startswith((".", "__")))
    return [s / DOCUMENT_NAME if (s / DOCUMENT_NAME).is_file() else s for s in subs]


def file_fingerprint(path: Path) -> str:
    """A file's modification time and size, or "missing": what tells a changed document without reading it."""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return f"{st.st_mtime_ns}:{st.st_size}"


def scan_corpus(corpus: str | os.PathLike[str], previous: dict[str, FileState] | None = None) -> ScanResult:
    """Validate every document of ``corpus``, reusing ``previous`` verdicts for unchanged files (by default
    this process's last scan of the folder: ``interviewsim run`` scans it to register, to plan, and in every
    stage run it records, 0.2 s a scan at 6 personalities, py-spy).

    A personality_id claimed by two valid files is registered once (first in folder order) and the
    second file is reported: its id would otherwise silently point at either file.
    """
    key = str(Path(corpus).resolve())
    result = _scan(Path(corpus), _LAST_SCAN.get(key, {}) if previous is None else previous)
    _LAST_SCAN[key] = result.states
    return result


_LAST_SCAN: dict[str, dict[str, FileState]] = {}
"""Corpus folder -> the verdicts of this process's last scan of it, by file (each with its fingerprint)."""


def _scan(corpus: Path, previous: dict[str, FileState]) -> ScanResult:
    result = ScanResult()
    if not corpus.exists():
        result.problems.append(str(Problem(str(corpus), "$", "not-found", "no such file or folder")))
        return result
    if not _candidates(corpus):
        # An empty folder: name the real reason ([no-documents]) rather than registering nothing silently.
        result.problems.extend(str(p) for p in validate_paths([corpus]))
        return result
    owners: dict[str, tuple[str, str]] = {}
    for path in _candidates(corpus):
        fp = file_fingerprint(path)
        state = previous.get(str(path))
        if state is None or state.fingerprint != fp:
            state = _validate(path, fp)
        result.states[str(path)] = state
        if state.problems:
            result.problems.extend(state.problems)
            continue
        assert state.personality_id is not None
        key = personality_key(state.personality_id)
        if key in owners:
            result.problems.append(str(duplicate_personality(path, state.personality_id, *owners[key])))
            continue
        owners[key] = (state.personality_id, str(path))
        result.valid[state.personality_id] = str(path)
    return result


def _validate(path: Path, fingerprint: str) -> FileState:
    if path.is_dir():  # a corpus sub-folder without the document: the loader's corpus verdict, not "no documents"
        problem = Problem(str(path), "$", "missing-document", f"corpus sub-folder has no {DOCUMENT_NAME}")
        return FileState(fingerprint, None, (str(problem),))
    problems = validate_paths([path])
    if problems:
        return FileState(fingerprint, None, tuple(str(p) for p in problems))
    # Ids Dagster cannot key (``|``, ``,``, newline...) are refused by the loader itself (rule
    # ``unusable-id``), so ``interviewsim validate`` accepts exactly what can be registered.
    return FileState(fingerprint, load_document(path).personality_id)


@dataclass(frozen=True)
class Registration:
    """What registering a corpus did, and which registered personalities the corpus no longer backs.

    The default ``DAGSTER_HOME`` is shared across corpora, so a personality registered from another
    (or an older) corpus stays a partition; ``stale`` lists those, for ``run`` to skip with a warning
    instead of failing every personality on their missing document.
    """

    added: list[str]
    known: list[str]
    stale: list[str]
    problems: list[str]
    valid: list[str]


def register_corpus(instance, corpus: str | os.PathLike[str]) -> Registration:
    """Add every valid personality of ``corpus`` as a partition (``interviewsim register`` / ``run``)."""
    from .defs.corpus.partitions import PERSONALITY

    scan = scan_corpus(corpus)
    registered = list(instance.get_dynamic_partitions(PERSONALITY))
    known_set = set(registered)
    new = [pid for pid in scan.valid if pid not in known_set]
    if new:
        instance.add_dynamic_partitions(PERSONALITY, new)
    stale = [pid for pid in registered if pid not in scan.valid]
    return Registration(added=new, known=[pid for pid in scan.valid if pid in known_set], stale=stale,
                        problems=list(scan.problems), valid=list(scan.valid))


def manifest_personalities(cfg) -> list[str]:
    """The personalities the curation's manifest names when ``cfg`` curates (its partitions), else none."""
    from interviewsim_core.curation.stage import curates
    from interviewsim_core.curation.step import curation_personalities

    return curation_personalities(cfg) if curates(cfg) else []
