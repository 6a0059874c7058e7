"""Strict loading of ``prepared_input.json`` files and corpus folders (INPUT_SCHEMA.md).

Users need every problem of every file in one report (file, JSON path, rule) so they can fix a
corpus in one pass; the per-document rules live in ``input_rules.py``, this module finds the
files, adds the rule that spans files (a personality_id defined twice) and builds the models.

Corpus layout decisions (INPUT_SCHEMA.md leaves them open):

- A path to a file is read as one document, whatever its name.
- A folder that directly holds ``prepared_input.json`` is one document; its sub-folders are not
  searched.
- Otherwise the folder is a corpus: every sub-folder must hold a ``prepared_input.json``
  (a sub-folder without one is reported, since it is almost always a misnamed file). Files
  beside the sub-folders (``manifest.json``, READMEs) and other files inside a sub-folder are
  ignored, as are hidden sub-folders (``.*``) and dunder ones (``__pycache__``).
- ``tags`` is required on every QA pair (an empty array means "no labels"), like every other
  listed field.

The loader never writes anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import InputValidationError, Problem
from .input_rules import RULES, check_file, personality_key
from .schema import PreparedInput
from .split import split_personality

__all__ = [
    "DOCUMENT_NAME",
    "RULES",
    "LoadedDocument",
    "discover_documents",
    "duplicate_personality",
    "index_corpus",
    "load_corpus",
    "load_document",
    "load_paths",
    "validate_paths",
]

DOCUMENT_NAME = "prepared_input.json"

@dataclass(frozen=True)
class LoadedDocument:
    """A validated document with the file it came from, for messages and sensors."""

    path: Path
    doc: PreparedInput
    personality_id: str = ""


def _is_skipped_dir(entry: Path) -> bool:
    return entry.name.startswith(".") or entry.name.startswith("__")


def _not_a_file(entry: Path) -> str | None:
    """What a ``prepared_input.json`` entry is when it is there but not a readable regular file.

    None when it is a regular file (or a link to one) and when nothing of that name exists: only
    then is the document "missing". Saying "a FIFO" or "a symbolic link loop" points at the fix,
    where "no prepared_input.json" sends the user looking for a file they can see in ``ls``.
    """
    import errno
    import stat

    try:
        st = entry.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be inspected: {exc.strerror or exc}"
    link = ""
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(entry)
        try:
            st = entry.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return f"is a symbolic link loop (-> {target})"
            return f"is a broken symbolic link (-> {target}: {exc.strerror or exc})"
        link = f"a symbolic link (-> {target}) to "
    if stat.S_ISREG(st.st_mode):
        return None
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    what = next((name for test, name in kinds if test(st.st_mode)), "not a regular file")
    return f"is {link}{what}, not a regular file"


def _outside(entry: Path, folders: Iterable[Path]) -> str | None:
    """The target of a ``prepared_input.json`` symbolic link that resolves outside ``folders``, else None.

    A corpus folder is what the user registered; a link inside it that reads any file on the machine
    (``/etc/...``, another team's data) would make that file a personality without anyone naming it.
    Sub-folders that are links (a corpus assembled from several places) are followed: the user made
    that folder part of the corpus, and its own document must then lie inside it.
    """
    if not entry.is_symlink():
        return None
    target = entry.resolve()
    if any(target.is_relative_to(f.resolve()) for f in folders):
        return None
    return str(target)


def _entry_problem(doc: Path, *folders: Path) -> Problem | None:
    what = _not_a_file(doc)
    if what is not None:
        return Problem(str(doc), "$", "not-a-file", f"{DOCUMENT_NAME} {what}")
    target = _outside(doc, folders)
    if target is not None:
        return Problem(str(doc), "$", "symlink-outside-corpus",
                       f"{DOCUMENT_NAME} is a symbolic link to {target}, outside the corpus folder {folders[0]}")
    return None


def _discover(path: Path) -> tuple[list[Path], list[Problem]]:
    if path.is_file():
        return [path], []
    if not path.is_dir():
        what = _not_a_file(path)
        return [], [Problem(str(path), "$", "not-a-file" if what else "not-found",
                            f"the path {what}" if what else "no such file or folder")]
    direct = path / DOCUMENT_NAME
    problem = _entry_problem(direct, path)
    if problem is not None:
        return [], [problem]
    if direct.is_file():
        return [direct], []
    try:
        subdirs = sorted(e for e in path.iterdir() if e.is_dir() and not _is_skipped_dir(e))
    except OSError as exc:
        return [], [Problem(str(path), "$", "not-found", f"cannot list the folder: {exc.strerror or exc}")]
    if not subdirs:
        return [], [
            Problem(
                str(path),
                "$",
                "no-documents",
                f"holds neither {DOCUMENT_NAME} nor personality sub-folders with one",
            )
        ]
    found: list[Path] = []
    problems: list[Problem] = []
    for sub in subdirs:
        doc = sub / DOCUMENT_NAME
        problem = _entry_problem(doc, path, sub)
        if problem is not None:
            problems.append(problem)
        elif doc.is_file():
            found.append(doc)
        else:
            problems.append(
                Problem(str(sub), "$", "missing-document", f"corpus sub-folder has no {DOCUMENT_NAME}")
            )
    return found, problems


def duplicate_personality(file: str | os.PathLike[str], pid: str, first_pid: str, first_file: str | os.PathLike[str]) -> Problem:
    """The problem of a second file claiming a personality_id (or one indistinguishable from it)."""
    same = "" if pid == first_pid else f" as {first_pid!r} (equal after NFC normalisation and case folding)"
    return Problem(str(file), "$.personality_id", "duplicate-personality",
                   f"personality_id {pid!r} is already defined{same} in {first_file}")


def discover_documents(path: str | os.PathLike[str]) -> list[Path]:
    """List the ``prepared_input.json`` files a path stands for (see the module docstring for the layout).

    Raises:
        InputValidationError: the path is missing, or the corpus has no or incomplete sub-folders.
    """
    found, problems = _discover(Path(path))
    if problems:
        raise InputValidationError(problems)
    return found


def _load_all(paths: Iterable[str | os.PathLike[str]], keep: bool = True) -> tuple[list[LoadedDocument], list[Problem]]:
    files: list[Path] = []
    problems: list[Problem] = []
    seen: set[Path] = set()
    for p in paths:
        found, discovery_problems = _discover(Path(p))
        problems.extend(discovery_problems)
        for f in found:
            # The same file reached twice (``corpus`` and ``corpus/X``) is one document, not a clash.
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                files.append(f)
    loaded: list[LoadedDocument] = []
    owner: dict[str, tuple[str, Path]] = {}
    for f in files:
        doc, pid, file_problems = check_file(f)
        problems.extend(file_problems)
        if pid is not None and pid.strip():
            key = personality_key(pid)
            if key in owner:
                problems.append(duplicate_personality(f, pid, *owner[key]))
                continue
            owner[key] = (pid, f)
        if doc is not None:
            loaded.append(LoadedDocument(f, doc if keep else None, doc.personality_id))  # type: ignore[arg-type]
    return loaded, problems


def load_paths(paths: Iterable[str | os.PathLike[str]]) -> list[LoadedDocument]:
    """Load every document under several files or corpus folders, checked together.

    personality_id must be unique across everything given, so a sensor or the CLI can pass
    several folders at once and still get one verdict.

    Raises:
        InputValidationError: with every problem of every file, when anything breaks a rule.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    loaded, problems = _load_all(paths)
    if problems:
        raise InputValidationError(problems)
    return loaded


def load_corpus(path: str | os.PathLike[str]) -> list[PreparedInput]:
    """Load one ``prepared_input.json`` or a corpus folder, in sub-folder name order.

    Raises:
        InputValidationError: with every problem found in the whole corpus.
    """
    return [item.doc for item in load_paths([path])]


def index_corpus(path: str | os.PathLike[str]) -> dict[str, Path]:
    """Check a whole corpus as ``load_corpus`` does, but keep only personality id -> file.

    For a runner that loads one personality at a time: every file is still read and checked up
    front (every problem of every file listed, nothing run on a broken corpus), but no document
    is held, so memory does not grow with the corpus.

    Raises:
        InputValidationError: with every problem found in the whole corpus.
    """
    loaded, problems = _load_all([path], keep=False)
    if problems:
        raise InputValidationError(problems)
    return {item.personality_id: item.path for item in loaded}


def load_document(path: str | os.PathLike[str]) -> PreparedInput:
    """Load exactly one ``prepared_input.json`` file.

    Raises:
        InputValidationError: with every problem of the file.
    """
    path = Path(path)
    if not path.is_file():
        raise InputValidationError([Problem(str(path), "$", "not-found", "no such file")])
    doc, _pid, problems = check_file(path)
    if problems:
        raise InputValidationError(problems)
    assert doc is not None
    return doc


def validate_paths(
    paths: Iterable[str | os.PathLike[str]], *, require_split: bool = True
) -> list[Problem]:
    """Every problem of the given files/folders, as a list; never raises for bad input.

    For callers that must report rather than stop (the CLI, a Dagster sensor deciding which
    personalities to register). With ``require_split`` a document that loads but cannot be
    split chronologically (fewer than two interviews) is reported too, since no evaluation
    can run on it.
    """
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    try:
        loaded, problems = _load_all(paths)
    except (OSError, ValueError, RecursionError) as exc:  # defensive: the contract is "never raises"
        return [Problem(", ".join(str(p) for p in paths), "$", "not-found", f"cannot validate: {exc}")]
    if require_split:
        for item in loaded:
            if len(item.doc.interviews) < 2:
                try:
                    split_personality(item.doc)
                except ValueError as exc:
                    problems.append(Problem(str(item.path), "$.interviews", "too-few-interviews", str(exc)))
    return problems
