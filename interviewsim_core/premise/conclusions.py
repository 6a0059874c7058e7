"""What the premise judge is asked about: conclusions, each with the window its deriver saw.

Three sources (issue 5):

* fact-summary statements: a personality's fact summary split into single statements; the
  window is the held-out *responses* the summary was built from, in chronological order, because
  that is all the fact-summary builder saw (``pipeline/references.py`` hands it response texts, never
  the interviewer's questions);
* atomic items: the item stated as a claim; the window is its source QA pair, question and
  response, because the atomic-item builder saw both;
* user-supplied conclusions: a JSONL file, validated strictly before anything runs.

Time references for the framework's own artifacts are the interview id and its ``sequence``:
the prepared input carries no wall-clock dates, and the window says so instead of inventing any.

Seed 002 requires pass 2 to see exactly the window the deriver saw: a window with more in it
(say, the questions) would let pass 2 call context PRESENT_IN_WINDOW that the deriver never had,
and the attribution split, the bench's headline number, would blame the prompt for an input gap.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict

from ..contracts.premise import WindowMessage
from ..errors import InputValidationError, Problem
from ..split import HeldOutSplit, PairRef

ArtifactKind = Literal["fact_summary", "atomic_item", "user"]

CONCLUSIONS_VERSION = "2"
"""Version of what this module turns artifacts into: the statement splitter, the atomic-claim
wording, the window each kind gets and ``NO_DATES_NOTE``. Any of them changes the text the judge
reads, so bump it with any such change; the premise assets put it in their code version so that
a bump re-materialises them. (2: fact-summary windows hold the responses only.)"""

INTERVIEWER = "interviewer"

NO_DATES_NOTE = (
    "Note: this input has no wall-clock dates (the prepared input has no date field). Each message's "
    "time reference is the interview it belongs to and that interview's sequence number (a lower "
    "sequence is an earlier interview). Date-like text inside an interview id is part of an identifier, "
    "not a verified timestamp."
)


class Conclusion(BaseModel):
    """One stored conclusion and the full window its deriver saw."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    conclusion_id: str
    artifact_kind: ArtifactKind
    personality_id: str
    peer_id: str
    conclusion: str
    window: tuple[WindowMessage, ...]
    window_note: str | None = None


# -- statements of a fact summary ------------------------------------------------------------

# Words that end with a period without ending a sentence. Compared lowercased, without the final
# period; dotted forms such as "U.S", "e.g" and single initials ("J") are caught by _INITIALS.
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt ft gen col lt sgt capt cmdr adm gov sen rep pres rev hon "
    "vs etc inc ltd co corp bros dept univ approx est fig al ca cf "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_NUMBER_ABBREVIATIONS = frozenset({"no", "nos"})
_INITIALS = re.compile(r"^(?:[A-Za-z]\.)*[A-Za-z]$")
_CANDIDATE = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*\s+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2013]|\d{1,3}[.)])\s+")


def _is_boundary(text: str, m: re.Match[str]) -> bool:
    rest = text[m.end():]
    if not rest or not (rest[0].isupper() or rest[0].isdigit() or rest[0] in "\"'\u201c\u2018("):
        return False  # "the U.S. government", "e.g. cats": a lowercase continuation is one sentence
    if text[m.start()] != ".":
        return True
    before = text[: m.start()].split()
    word = before[-1].lstrip("(\"'\u201c\u2018") if before else ""
    if word.lower() in _NUMBER_ABBREVIATIONS:  # "No. 5" continues; a sentence may end with "no."
        return not rest[0].isdigit()
    return not (word.lower() in _ABBREVIATIONS or _INITIALS.match(word))


def split_statements(summary: str) -> list[str]:
    """Split a fact summary into its individual statements.

    Lines (and bullet or numbered list items) are split first, then sentences inside each line
    at ``.``, ``!`` or ``?`` followed by whitespace and an upper-case letter, digit or opening
    quote. A period does not end a sentence after a known abbreviation ("Mr.", "Dr.", "Inc.",
    month names) or a run of single-letter initials ("J. F.", "U.S.", "e.g."); decimals such as
    "3.5" never split because no whitespace follows their period. The cost of that choice: a
    sentence that truly ends with "U.S." stays joined to the next one, which keeps a statement
    whole rather than cutting one in two.
    """
    out: list[str] = []
    for line in summary.splitlines():
        line = _BULLET.sub("", line).strip()
        start = 0
        for m in _CANDIDATE.finditer(line):
            if _is_boundary(line, m):
                out.append(line[start : m.end()].strip())
                start = m.end()
        out.append(line[start:].strip())
    return [s for s in out if any(ch.isalnum() for ch in s)]


def _time_of(p: PairRef) -> str:
    return f"interview {p.interview_id}, sequence {p.sequence}"


def _pair_window(pairs: Iterable[PairRef], personality_id: str) -> tuple[WindowMessage, ...]:
    """Question then response of each pair: what a deriver shown whole QA pairs saw."""
    msgs: list[WindowMessage] = []
    for p in pairs:
        msgs.append(WindowMessage(speaker=INTERVIEWER, time=_time_of(p), text=p.question))
        msgs.append(WindowMessage(speaker=personality_id, time=_time_of(p), text=p.response))
    return tuple(msgs)


def _response_window(pairs: Iterable[PairRef], personality_id: str) -> tuple[WindowMessage, ...]:
    """The responses alone: what the fact-summary builder saw."""
    return tuple(WindowMessage(speaker=personality_id, time=_time_of(p), text=p.response) for p in pairs)


def _ok_rows(df: pd.DataFrame | None, personality_id: str) -> pd.DataFrame:
    if df is None or df.empty:
        return pd.DataFrame()
    rows = df[df["personality_id"] == personality_id]
    if "status" in rows.columns:
        rows = rows[rows["status"] == "ok"]
    return rows


def fact_summary_conclusions(split: HeldOutSplit, fact_summary_df: pd.DataFrame | None) -> list[Conclusion]:
    """One conclusion per statement of this personality's (successfully built) fact summary.

    The window is the responses of the held-out pairs named in ``source_qa_ids`` (all held-out
    pairs when that column is absent), oldest first, each with its interview and sequence; no
    interviewer question, since the builder never saw one.
    """
    pid = split.personality_id
    out: list[Conclusion] = []
    for row in _ok_rows(fact_summary_df, pid).itertuples(index=False):
        ids = getattr(row, "source_qa_ids", None)
        wanted = None if ids is None else {str(i) for i in ids}
        pairs = [p for p in split.test_pairs if wanted is None or p.qa_id in wanted]
        window = _response_window(pairs, pid)
        for i, statement in enumerate(split_statements(str(row.summary)), start=1):
            out.append(
                Conclusion(
                    conclusion_id=f"{pid}:fact_summary:{i:03d}",
                    artifact_kind="fact_summary",
                    personality_id=pid,
                    peer_id=pid,
                    conclusion=statement,
                    window=window,
                    window_note=NO_DATES_NOTE,
                )
            )
    return out


def atomic_claim(question: str, answer: str) -> str:
    """An atomic item as one declarative claim: ``The answer to the question "Q" is "A".``

    Deliberately a fixed frame around the item's own words: rewriting the question into a
    sentence (resolving "you", moving the wh-word) would add interpretation the stored item does
    not carry, and the judge is meant to grade the item, not our paraphrase of it.
    """
    return f'The answer to the question "{question.strip()}" is "{answer.strip().rstrip(".")}".'


def atomic_item_conclusions(split: HeldOutSplit, atomic_items_df: pd.DataFrame | None) -> list[Conclusion]:
    """One conclusion per (successfully parsed) atomic item; the window is its source QA pair."""
    pid = split.personality_id
    by_id = {p.qa_id: p for p in (*split.train_pairs, *split.test_pairs)}
    out: list[Conclusion] = []
    for row in _ok_rows(atomic_items_df, pid).itertuples(index=False):
        source = by_id.get(str(row.qa_id))
        if source is None:
            raise ValueError(f"atomic item {row.qa_id!r} of {pid!r} names a QA pair that is not in the split")
        out.append(
            Conclusion(
                conclusion_id=f"{pid}:atomic_item:{row.qa_id}",
                artifact_kind="atomic_item",
                personality_id=pid,
                peer_id=pid,
                conclusion=atomic_claim(str(row.atomic_question), str(row.atomic_answer)),
                window=_pair_window([source], pid),
                window_note=NO_DATES_NOTE,
            )
        )
    return out


# -- user-supplied conclusions ---------------------------------------------------------------

USER_KEYS = ("conclusion", "peer_id", "window", "conclusion_id")
WINDOW_KEYS = ("speaker", "time", "text")


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _check_object(obj: dict[str, Any], keys: Sequence[str], path: str, emit) -> bool:
    ok = True
    for k in keys:
        if k not in obj:
            emit(path, "missing-field", f"field {k!r} is required")
            ok = False
    for k in obj:
        if k not in keys:
            emit(f"{path}.{k}", "unknown-field", f"field {k!r} is not part of the record (expected {list(keys)})")
            ok = False
    return ok


def _check_text(value: Any, path: str, emit) -> None:
    if not isinstance(value, str):
        emit(path, "wrong-type", f"must be a string, got {type(value).__name__}")
    elif not value.strip():
        emit(path, "blank", "must not be blank")


def load_user_conclusions(path: str | Path) -> list[Conclusion]:
    """Read and strictly validate a JSONL file of user conclusions.

    Each non-blank line is one object with exactly ``conclusion``, ``peer_id``, ``window`` and
    ``conclusion_id``; the window is a non-empty list of ``{speaker, time, text}`` objects, all
    non-blank strings (write the time reference you have, e.g. "2026-07-02T02:13:45Z" or
    "message 14"); conclusion ids are unique in the file. Blank lines are skipped.

    Raises:
        InputValidationError: every problem found, each located as ``line N`` plus a JSON path;
            nothing is returned (so nothing runs) when any line is invalid.
    """
    p = Path(path)
    name = str(p)
    problems: list[Problem] = []

    def emit(where: str, rule: str, message: str) -> None:
        problems.append(Problem(name, where, rule, message))

    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputValidationError([Problem(name, "$", "not-found", "file does not exist")]) from None
    except UnicodeDecodeError as exc:
        raise InputValidationError([Problem(name, "$", "not-utf8", str(exc))]) from None

    out: list[Conclusion] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {n}: $"
        try:
            obj = json.loads(line, object_pairs_hook=_no_duplicates)
        except _Duplicate as exc:
            emit(where, "duplicate-key", f"key {exc} appears twice")
            continue
        except json.JSONDecodeError as exc:
            emit(where, "invalid-json", f"{exc.msg} at column {exc.colno}")
            continue
        if not isinstance(obj, dict):
            emit(where, "wrong-type", f"each line must be a JSON object, got {type(obj).__name__}")
            continue
        before = len(problems)
        _check_object(obj, USER_KEYS, where, emit)
        for k in ("conclusion", "peer_id", "conclusion_id"):
            if k in obj:
                _check_text(obj[k], f"{where}.{k}", emit)
        window = obj.get("window")
        if "window" in obj:
            if not isinstance(window, list):
                emit(f"{where}.window", "wrong-type", f"must be a list, got {type(window).__name__}")
            elif not window:
                emit(f"{where}.window", "empty", "must hold at least one message")
            else:
                for i, m in enumerate(window):
                    mp = f"{where}.window[{i}]"
                    if not isinstance(m, dict):
                        emit(mp, "wrong-type", f"must be an object, got {type(m).__name__}")
                        continue
                    _check_object(m, WINDOW_KEYS, mp, emit)
                    for k in WINDOW_KEYS:
                        if k in m:
                            _check_text(m[k], f"{mp}.{k}", emit)
        cid = obj.get("conclusion_id")
        if isinstance(cid, str) and cid.strip():
            if cid in seen:
                emit(f"{where}.conclusion_id", "duplicate-id", f"{cid!r} already used on line {seen[cid]}")
            else:
                seen[cid] = n
        if len(problems) == before:
            out.append(
                Conclusion(
                    conclusion_id=obj["conclusion_id"],
                    artifact_kind="user",
                    personality_id=obj["peer_id"],
                    peer_id=obj["peer_id"],
                    conclusion=obj["conclusion"],
                    window=tuple(WindowMessage(**m) for m in obj["window"]),
                )
            )
    if not problems and not out:
        problems.append(Problem(name, "$", "empty", "the file holds no conclusion"))
    if problems:
        raise InputValidationError(problems)
    return out
