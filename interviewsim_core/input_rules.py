"""The rules of INPUT_SCHEMA.md, checked over one parsed ``prepared_input.json``.

Validation walks the plain parsed JSON tree instead of leaning on pydantic errors, for three
reasons: a plain ``json.load`` silently drops duplicate keys, pydantic stops describing a
subtree at its first type error, and users need every problem of a file at once, each located
by a JSON path such as ``$.interviews[3].qa_pairs[0].qa_id`` and a rule id from ``RULES``.
Only a tree that passed the walk becomes the frozen models of ``schema.py``. Finding files and
checking rules that span files (duplicate personality_id) is ``loader.py``'s job.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from .errors import Problem
from .schema import SCHEMA_VERSION, PreparedInput

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_ID_CHARS",
    "MAX_INTEGER",
    "MAX_QA_PAIRS",
    "MAX_TEXT_CHARS",
    "PARTITION_KEY_BREAKERS",
    "RULES",
    "check_file",
    "personality_id_problem",
    "personality_key",
]

# Limits beyond which a document cannot be evaluated sensibly (docs/DESIGN.md, "Input rules beyond
# INPUT_SCHEMA.md"). The real press-conference corpus peaks at 1.9 MB per file, 1,800 QA pairs per
# personality and an 18,000-character response, far inside them.
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A file larger than this is refused before it is read (memory: the whole document is parsed at once)."""
MAX_TEXT_CHARS = 200_000
"""question, response, profile, long_profile: about 50k tokens, more than a prompt can carry."""
MAX_QA_PAIRS = 20_000
"""QA pairs per document: each held-out pair costs several model calls per method."""
MAX_INTEGER = 2**63 - 1
"""Largest integer the schema accepts (``sequence``, its only integer field): Parquet stores it as int64,
so a larger value would pass validation and then stop ``plan``/``run`` with an OverflowError."""
MAX_ID_CHARS = 512
"""personality_id, interview_id, qa_id and tags: ids are keys in Dagster, Parquet and the report."""
PARTITION_KEY_BREAKERS = ("|", ",", "[", "]", "...")
"""Substrings a personality_id cannot hold: Dagster joins and lists partition keys with them."""

# Control (Cc), invisible formatting (Cf: zero-width, bidi marks, BOM), line/paragraph separators
# and lone surrogates: in an id they make two ids look identical, break a terminal line or a file name.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})

#: Every rule id a ``Problem`` can carry, with what it means. Tests pin this set.
RULES: dict[str, str] = {
    "not-found": "the given path does not exist or cannot be read",
    "no-documents": "a corpus folder holds no personality sub-folder",
    "missing-document": "a corpus sub-folder holds no prepared_input.json",
    "not-a-file": "prepared_input.json exists but is not a regular file: a directory, FIFO, socket, device, "
    "a symbolic link loop or a broken symbolic link (the message says which)",
    "symlink-outside-corpus": "prepared_input.json is a symbolic link whose target lies outside the corpus "
    "folder (linked personality sub-folders are followed)",
    "not-utf8": "the file is not valid UTF-8",
    "invalid-json": "the file is not one valid JSON document (syntax, BOM, NaN/Infinity)",
    "duplicate-key": "a JSON object names the same key twice",
    "unknown-field": "a field that the schema does not list",
    "missing-field": "a field that the schema requires is absent",
    "wrong-type": "a value of the wrong JSON type (e.g. a number where a string is required)",
    "unsupported-version": f"schema_version is not {SCHEMA_VERSION!r}",
    "blank-id": "personality_id, interview_id or qa_id is empty or whitespace only",
    "unusable-id": "an id or tag holds a control or invisible character (newline, NUL, zero-width, "
    "bidi mark), leading/trailing whitespace, or (personality_id) one of | , [ ] ... that Dagster "
    "partition keys cannot hold",
    "id-too-long": f"an id or tag is longer than {MAX_ID_CHARS} characters",
    "blank-text": "question or response has no visible character (empty, whitespace or invisible "
    "formatting characters only)",
    "text-too-long": f"a question, response or profile is longer than {MAX_TEXT_CHARS:,} characters",
    "too-many-pairs": f"a document holds more than {MAX_QA_PAIRS:,} QA pairs",
    "file-too-large": f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB",
    "invalid-unicode": "a string holds a lone surrogate escape (\\ud800-\\udfff) that UTF-8 cannot encode",
    "not-integer": "sequence is not an integer (booleans and 1.0 are not integers)",
    "negative-sequence": "sequence is below zero",
    "number-too-large": f"an integer (sequence) is above {MAX_INTEGER:,} (2^63 - 1): the tables store it as a "
    "64-bit integer",
    "duplicate-sequence": "two interviews of a document share a sequence",
    "duplicate-id": "two interviews share an interview_id, or two QA pairs share a qa_id "
    "(compared after Unicode NFC normalisation: canonically equivalent ids look identical)",
    "blank-tag": "a tag is empty or whitespace only",
    "duplicate-tag": "a QA pair lists the same tag twice (compared after NFC normalisation)",
    "empty-array": "interviews or qa_pairs is an empty array",
    "duplicate-personality": "a personality_id appears in two files of the corpus (compared after NFC "
    "normalisation and case folding: such ids cannot be told apart in reports or on case-insensitive disks)",
    "too-few-interviews": "fewer than two interviews: the chronological hold-out is impossible "
    "(reported by validate_paths only; load_* accept such documents and split refuses them)",
}

_ROOT_FIELDS = ("schema_version", "personality_id", "personality", "interviews")
_PERSONALITY_FIELDS = ("profile", "long_profile")
_INTERVIEW_FIELDS = ("interview_id", "sequence", "qa_pairs")
_PAIR_FIELDS = ("qa_id", "question", "response", "tags")
_FIELD_SETS = {f: frozenset(f) for f in (_ROOT_FIELDS, _PERSONALITY_FIELDS, _INTERVIEW_FIELDS, _PAIR_FIELDS)}

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _nfc(value: str) -> str:
    return value if value.isascii() else unicodedata.normalize("NFC", value)


def personality_key(personality_id: str) -> str:
    """What two personality_ids must differ in to be distinct: NFC-normalised, case-folded text.

    ``Zoë`` typed on macOS (NFD) and on Linux (NFC) are the same person to a reader, and ``Alice`` /
    ``ALICE`` share a file on a case-insensitive disk; the loader refuses the second of such a pair.
    """
    return _nfc(personality_id).casefold()


_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""Only a JSON escape can put a lone surrogate into decoded text; files without one skip the check."""


def _has_invisible(value: str) -> bool:
    if value.isascii():
        return _ASCII_CONTROL.search(value) is not None
    return any(unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in value)


def _id_problem(value: str, *, partition_key: bool) -> tuple[str, str] | None:
    """(rule, message) when ``value`` cannot serve as an id (or tag); None when it can."""
    if len(value) > MAX_ID_CHARS:
        return "id-too-long", f"is {len(value)} characters long; the limit is {MAX_ID_CHARS}"
    if value != value.strip():
        return "unusable-id", f"{value!r} starts or ends with whitespace"
    if _has_invisible(value):
        bad = sorted({f"U+{ord(ch):04X}" for ch in value
                      if (ch < " " or ch == "\x7f") or unicodedata.category(ch) in _INVISIBLE_CATEGORIES})
        return "unusable-id", f"{value!r} holds control or invisible character(s) {', '.join(bad)}"
    if partition_key:
        bad = [c for c in PARTITION_KEY_BREAKERS if c in value]
        if bad:
            return "unusable-id", (f"{value!r} holds {' '.join(bad)}, which Dagster partition keys cannot hold")
    return None


def personality_id_problem(personality_id: str) -> str | None:
    """Why a personality_id cannot be a partition key (message), or None: the loader's own rule, for callers
    that get ids from elsewhere (``interviewsim unregister``, the Dagster sensor)."""
    found = _id_problem(personality_id, partition_key=True)
    return None if found is None else f"[{found[0]}] personality_id {found[1]}"


def _visible(text: str) -> bool:
    first = text[:1]
    if first and not first.isspace() and (first.isascii() or unicodedata.category(first) not in _INVISIBLE_CATEGORIES):
        return True  # the common case, decided by the first character without copying the text
    return any(not ch.isspace() and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES for ch in text)


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _DuplicateKeys(dict):
    """A parsed JSON object that named some keys twice; remembers which, for the walk to report."""

    duplicates: tuple[str, ...] = ()


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    dups: list[str] = []
    for key, _ in pairs:
        if key in seen and key not in dups:
            dups.append(key)
        seen.add(key)
    flagged = _DuplicateKeys(obj)
    flagged.duplicates = tuple(dups)
    return flagged


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity; JSON does not, and other tools would choke on them.
    raise ValueError(f"{name} is not valid JSON")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _child(path: str, key: str) -> str:
    if _IDENTIFIER.match(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


class _Walk:
    """Collects the problems of one parsed document; one instance per file."""

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []
        self.surrogates_possible = True
        """False when the raw text holds no ``\\uD8xx``-style escape (set by ``_parse``): then no string can
        hold a lone surrogate and the per-string check is skipped."""

    def add(self, path: str, rule: str, message: str) -> None:
        assert rule in RULES, rule
        self.problems.append(Problem(self.file, path, rule, message))

    def obj(self, value: Any, path: str, fields: tuple[str, ...]) -> bool:
        """Check one object's shape; True when it is an object whose present fields can be checked."""
        if type(value) is dict and value.keys() == _FIELD_SETS[fields]:
            return True  # the common case, decided by one C-level set comparison
        if not isinstance(value, dict):
            self.add(path, "wrong-type", f"expected an object, got {_json_type(value)}")
            return False
        for key in getattr(value, "duplicates", ()):
            self.add(_child(path, key), "duplicate-key", f"key {key!r} appears more than once in this object")
        for key in value:
            if key not in fields:
                self.add(_child(path, key), "unknown-field", f"field {key!r} is not part of the schema")
        for key in fields:
            if key not in value:
                self.add(_child(path, key), "missing-field", f"required field {key!r} is missing")
        return True

    def string(self, obj: dict, key: str, path: str, blank_rule: str | None = None) -> str | None:
        if key not in obj:
            return None
        value = obj[key]
        where = _child(path, key)
        if not isinstance(value, str):
            self.add(where, "wrong-type", f"{key} must be a string, got {_json_type(value)}")
            return None
        if self.surrogates_possible and not _encodable(value):
            self.add(where, "invalid-unicode", f"{key} holds a lone surrogate (\\ud800-\\udfff escape)")
            return None
        if blank_rule == "blank-id" and not value.strip():
            self.add(where, blank_rule, f"{key} must not be blank")
            return None
        if blank_rule == "blank-id":
            problem = _id_problem(value, partition_key=key == "personality_id")
            if problem is not None:
                self.add(where, problem[0], f"{key} {problem[1]}")
                return None
            return value
        if blank_rule == "blank-text" and not _visible(value):
            self.add(where, blank_rule, f"{key} must hold at least one visible character")
            return None
        if len(value) > MAX_TEXT_CHARS:
            self.add(where, "text-too-long", f"{key} has {len(value):,} characters; the limit is {MAX_TEXT_CHARS:,}")
            return None
        return value

    def array(self, obj: dict, key: str, path: str, *, non_empty: bool) -> list | None:
        if key not in obj:
            return None
        value = obj[key]
        where = _child(path, key)
        if not isinstance(value, list):
            self.add(where, "wrong-type", f"{key} must be an array, got {_json_type(value)}")
            return None
        if non_empty and not value:
            self.add(where, "empty-array", f"{key} must hold at least one element")
        return value

    def document(self, root: Any) -> str | None:
        """Walk a whole document; returns its personality_id when that field itself is sound."""
        if not self.obj(root, "$", _ROOT_FIELDS):
            return None
        version = self.string(root, "schema_version", "$")
        if version is not None and version != SCHEMA_VERSION:
            self.add(
                "$.schema_version",
                "unsupported-version",
                f"schema_version {version!r} is not supported (expected {SCHEMA_VERSION!r})",
            )
        pid = self.string(root, "personality_id", "$", "blank-id")
        if "personality" in root and self.obj(root["personality"], "$.personality", _PERSONALITY_FIELDS):
            for key in _PERSONALITY_FIELDS:
                self.string(root["personality"], key, "$.personality")
        interviews = self.array(root, "interviews", "$", non_empty=True)
        if interviews is not None:
            self.interviews(interviews)
            n_pairs = sum(len(i["qa_pairs"]) for i in interviews
                          if isinstance(i, dict) and isinstance(i.get("qa_pairs"), list))
            if n_pairs > MAX_QA_PAIRS:
                self.add("$.interviews", "too-many-pairs",
                         f"the document holds {n_pairs:,} QA pairs; the limit is {MAX_QA_PAIRS:,}")
        return pid

    def interviews(self, interviews: list) -> None:
        interview_ids: dict[str, str] = {}
        sequences: dict[int, str] = {}
        qa_ids: dict[str, str] = {}
        for i, itv in enumerate(interviews):
            path = f"$.interviews[{i}]"
            if not self.obj(itv, path, _INTERVIEW_FIELDS):
                continue
            iid = self.string(itv, "interview_id", path, "blank-id")
            if iid is not None:
                self._unique(interview_ids, iid, f"{path}.interview_id", "interview_id")
            if "sequence" in itv:
                self.sequence(itv["sequence"], f"{path}.sequence", sequences)
            pairs = self.array(itv, "qa_pairs", path, non_empty=True)
            if pairs is not None:
                for j, pair in enumerate(pairs):
                    self.pair(pair, f"{path}.qa_pairs[{j}]", qa_ids)

    def sequence(self, value: Any, path: str, seen: dict[int, str]) -> None:
        # bool subclasses int in Python; JSON true is still not a sequence number.
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(path, "not-integer", f"sequence must be an integer, got {_json_type(value)} {value!r}")
            return
        if value < 0:
            self.add(path, "negative-sequence", f"sequence must be >= 0, got {value}")
            return
        if value > MAX_INTEGER:
            shown = str(value) if len(str(value)) <= 40 else f"a {len(str(value))}-digit number"
            self.add(path, "number-too-large", f"sequence {shown} is above {MAX_INTEGER} (2^63 - 1), the largest "
                     "integer the tables can store")
            return
        if value in seen:
            self.add(path, "duplicate-sequence", f"sequence {value} is already used at {seen[value]}")
            return
        seen[value] = path

    def pair(self, pair: Any, path: str, qa_ids: dict[str, str]) -> None:
        if not self.obj(pair, path, _PAIR_FIELDS):
            return
        qid = self.string(pair, "qa_id", path, "blank-id")
        if qid is not None:
            self._unique(qa_ids, qid, f"{path}.qa_id", "qa_id")
        self.string(pair, "question", path, "blank-text")
        self.string(pair, "response", path, "blank-text")
        tags = self.array(pair, "tags", path, non_empty=False)
        if tags is None:
            return
        seen: set[str] = set()
        for k, tag in enumerate(tags):
            where = f"{path}.tags[{k}]"
            if not isinstance(tag, str):
                self.add(where, "wrong-type", f"a tag must be a string, got {_json_type(tag)}")
            elif self.surrogates_possible and not _encodable(tag):
                self.add(where, "invalid-unicode", "the tag holds a lone surrogate (\\ud800-\\udfff escape)")
            elif not tag.strip():
                self.add(where, "blank-tag", "a tag must not be blank")
            elif (problem := _id_problem(tag, partition_key=False)) is not None:
                self.add(where, problem[0], f"tag {problem[1]}")
            elif _nfc(tag) in seen:
                self.add(where, "duplicate-tag", f"tag {tag!r} is listed twice")
            else:
                seen.add(_nfc(tag))

    def _unique(self, seen: dict[str, str], value: str, path: str, what: str) -> None:
        key = _nfc(value)
        if key in seen:
            twin = "" if key == value else " (the same text after NFC normalisation)"
            self.add(path, "duplicate-id", f"{what} {value!r} is already used at {seen[key]}{twin}")
        else:
            seen[key] = path


def _parse(path: Path, walk: _Walk) -> Any | None:
    """Read and parse one file; None (with problems recorded) when it is not a JSON document."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            walk.add("$", "file-too-large", f"the file has {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
            return None
        raw = path.read_bytes()
    except OSError as exc:
        walk.add("$", "not-found", f"cannot read the file: {exc.strerror or exc}")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        walk.add("$", "not-utf8", f"not valid UTF-8 at byte offset {exc.start}: {exc.reason}")
        return None
    if text.startswith("\ufeff"):
        walk.add("$", "invalid-json", "the file starts with a byte-order mark, which JSON forbids")
        return None
    walk.surrogates_possible = _SURROGATE_ESCAPE.search(text) is not None
    try:
        return json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        walk.add("$", "invalid-json", f"line {exc.lineno} column {exc.colno}: {exc.msg}")
    except ValueError as exc:
        walk.add("$", "invalid-json", str(exc))
    except RecursionError:
        walk.add("$", "invalid-json", "the document nests too deeply")
    return None


def check_file(path: Path) -> tuple[PreparedInput | None, str | None, list[Problem]]:
    """Validate one file; returns the model (only when it has no problem), its personality_id, problems."""
    walk = _Walk(str(path))
    tree = _parse(path, walk)
    if walk.problems:
        return None, None, walk.problems
    pid = walk.document(tree)
    if walk.problems:
        return None, pid, walk.problems
    # The walk has checked every type, so lax mode can only turn JSON arrays into tuples.
    return PreparedInput.model_validate(tree, strict=False), pid, []

