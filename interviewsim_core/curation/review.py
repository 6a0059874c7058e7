"""Human verification decisions (the paper's annotators): accept or reject a transcript, with a reason.

Decisions live in ``<corpus>/review.csv`` (``file``, ``decision`` accept/reject, ``reason``), one row
per transcript, rewritten atomically on each decision; a re-run of the curation honours them: a
rejected transcript is excluded with the reviewer's reason whatever quality control said, an
accepted one is kept even if quality control excluded it. The retention rate (kept / all) is what
the paper reports as 73.5%.

``load_review`` and ``transcript_review`` are what a reviewer's screen reads (the explorer's curation
pages): every transcript of the last curation (``curation_report.json``) with quality control's own
verdict, the decision the last curation applied and the one in ``review.csv`` now (a decision
recorded since then is *pending* until the next ``interviewsim curate``), and one transcript's
attributed turns and QA pairs from the personality's ``provenance.json`` and ``prepared_input.json``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..atomic_files import atomic_write
from ..errors import ConfigError, Problem
from ..loader import DOCUMENT_NAME
from .corpus import PROVENANCE_NAME, REPORT_NAME
from .models import QAPairDraft

REVIEW_NAME = "review.csv"
FIELDS = ("file", "decision", "reason")
Decision = Literal["accept", "reject"]


def read_decisions(corpus: Path | str) -> tuple[dict[str, tuple[Decision, str]], list[Problem]]:
    """file -> (decision, reason), and every malformed row (row number + rule); absent file: none."""
    path = Path(corpus) / REVIEW_NAME
    if not path.is_file():
        return {}, []
    out: dict[str, tuple[Decision, str]] = {}
    problems: list[Problem] = []
    reader = csv.DictReader(io.StringIO(path.read_text(encoding="utf-8")))
    if tuple(reader.fieldnames or ()) != FIELDS:
        return {}, [Problem(str(path), "header", "review-header", f"columns must be {list(FIELDS)}")]
    for n, row in enumerate(reader, start=1):
        if row["decision"] not in ("accept", "reject"):
            problems.append(Problem(str(path), f"row {n}", "review-decision", "decision must be accept or reject"))
        elif not (row["reason"] or "").strip():
            problems.append(Problem(str(path), f"row {n}", "review-reason", "a decision needs a reason"))
        else:
            out[row["file"]] = (row["decision"], row["reason"].strip())  # type: ignore[assignment]
    return out, problems


def record_decision(corpus: Path | str, file: str, decision: Decision, reason: str) -> Path:
    """Add or replace one transcript's decision; the CSV is rewritten atomically."""
    if decision not in ("accept", "reject") or not reason.strip():
        raise ValueError("a decision is accept or reject, with a non-blank reason")
    decisions, _ = read_decisions(corpus)
    decisions[file] = (decision, reason.strip())
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(FIELDS)
    w.writerows((f, d, r) for f, (d, r) in sorted(decisions.items()))
    data = buf.getvalue().encode("utf-8")
    return atomic_write(Path(corpus) / REVIEW_NAME, lambda fh: fh.write(data))


PAPER_RETENTION = 0.735
"""The share of transcripts the paper kept after its automated and human checks (seed 001, section 2.1)."""
CHECKS = ("identity", "conversational format", "content quality")
"""What the paper's annotators checked; a reviewer's reason names one (``reason_text`` joins it to the free text)."""


def apply(verdict: tuple[bool, str, str], decision: tuple[Decision, str] | None) -> tuple[bool, str, str]:
    """(keep, kind, reason) after review: the reviewer's decision, when there is one, wins over quality control's."""
    if decision is None:
        return verdict
    what, why = decision
    keep, kind, reason = verdict
    return what == "accept", "reviewed", f"{what}ed by a reviewer: {why} (quality control: {kind}: {reason})"


def reason_text(check: str, text: str) -> str:
    """One reason from a named check and free text (``"identity: the speaker is someone else"``)."""
    check, text = check.strip(), " ".join(text.split())
    if check and check not in CHECKS:
        raise ValueError(f"the check must be one of {list(CHECKS)}, not {check!r}")
    return f"{check}: {text}" if check and text else check or text


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReviewRow(_Frozen):
    """One transcript as a reviewer sees it in the list."""

    personality_id: str
    file: str
    date: str
    format: str | None
    pairs: int
    in_corpus: bool
    """Its personality was written by the last curation (it may still be excluded within it)."""
    curated: bool
    """It reached quality control (its personality was not refused before: a bad file, a manifest row)."""
    quality_kept: bool | None
    quality_kind: str | None
    quality_reason: str | None
    kept_last: bool
    """What the last curation did with it (quality control and the decisions it applied)."""
    applied: tuple[Decision, str] | None
    decision: tuple[Decision, str] | None
    """The decision in ``review.csv`` now."""

    @property
    def kept(self) -> bool:
        """Kept after review: the current decision, else quality control; never when it was not curated."""
        if not self.curated or self.quality_kept is None:
            return False
        return apply((self.quality_kept, self.quality_kind or "", self.quality_reason or ""), self.decision)[0]

    @property
    def pending(self) -> bool:
        """A decision recorded (or changed) since the last curation: the corpus does not show it yet."""
        return self.decision != self.applied


class ReviewState(_Frozen):
    """Every transcript of a curated corpus folder with the review's decisions, and the retention rate."""

    corpus: str
    rows: tuple[ReviewRow, ...]
    refused: dict[str, list[str]]
    problems: tuple[str, ...]
    """Malformed rows of ``review.csv`` (ignored, as ``curate`` ignores them)."""

    @property
    def kept(self) -> int:
        return sum(r.kept for r in self.rows)

    @property
    def retention(self) -> float | None:
        """Kept after review / all transcripts (the paper's 73.5%); None without transcripts."""
        return self.kept / len(self.rows) if self.rows else None

    @property
    def pending(self) -> int:
        return sum(r.pending for r in self.rows)

    def row(self, file: str) -> ReviewRow | None:
        return next((r for r in self.rows if r.file == file), None)


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: {what} cannot be read: {exc}") from None


def load_review(corpus: Path | str) -> ReviewState:
    """The list a reviewer works through.

    Raises:
        ConfigError: the folder holds no curation output (``curation_report.json``), or one written
            before quality control's verdict was kept apart from reviews (re-run ``interviewsim curate``).
    """
    folder = Path(corpus)
    path = folder / REPORT_NAME
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder (give the --out folder of interviewsim curate)")
    if not path.is_file():
        raise ConfigError(f"{folder}: no {REPORT_NAME}, so not a curated corpus folder: run "
                          f"`interviewsim curate --transcripts DIR --manifest FILE --out {folder}` first")
    report = _read_json(path, "the curation report")
    rows_in = report.get("transcripts") if isinstance(report, dict) else None
    if not isinstance(rows_in, list) or any("quality_kind" not in r for r in rows_in if isinstance(r, dict)):
        raise ConfigError(f"{path}: written by an older curation, without quality control's own verdict: re-run "
                          f"`interviewsim curate ... --out {folder}`")
    decisions, problems = read_decisions(folder)
    written = set(report.get("written") or {})
    rows = []
    for r in rows_in:
        applied = (r["review_decision"], r["review_reason"]) if r.get("review_decision") else None
        rows.append(ReviewRow(
            personality_id=r["personality_id"], file=r["file"], date=r["date"], format=r.get("format"),
            pairs=r.get("pairs", 0), in_corpus=r["personality_id"] in written, curated=r["quality_kind"] is not None,
            quality_kept=r["quality_kept"], quality_kind=r["quality_kind"], quality_reason=r["quality_reason"],
            kept_last=bool(r["kept"]), applied=applied, decision=decisions.get(r["file"])))
    return ReviewState(corpus=str(folder), rows=tuple(rows), refused=report.get("refused") or {},
                       problems=tuple(str(p) for p in problems))


class Turn(_Frozen):
    """One ingested turn with its attribution."""

    index: int
    label: str
    line: int
    text: str
    role: str
    decided_by: str
    reason: str


class Pair(QAPairDraft):
    """One QA pair the curation drew from the transcript: the corpus's texts beside the raw spans, and its id."""

    qa_id: str


class TranscriptReview(_Frozen):
    """What the transcript page shows: the list's row, its turns as attributed, the pairs kept."""

    row: ReviewRow
    interview_id: str | None
    turns: tuple[Turn, ...]
    pairs: tuple[Pair, ...]
    why_no_turns: str = ""


def transcript_review(corpus: Path | str, file: str, state: ReviewState | None = None) -> TranscriptReview | None:
    """One transcript's page, or None when the last curation has no such file.

    Turns come from the personality's ``provenance.json``, written only for a personality the last
    curation wrote; for the others ``why_no_turns`` says why there are none.
    """
    from .attribution import unit_key

    state = state or load_review(corpus)
    row = state.row(file)
    if row is None:
        return None
    folder = Path(corpus) / row.personality_id
    if not row.in_corpus:
        why = "; ".join(state.refused.get(row.personality_id, [])) or "not written"
        return TranscriptReview(row=row, interview_id=None, turns=(), pairs=(),
                                why_no_turns=f"personality {row.personality_id} was refused by the last curation: {why}")
    prov = _read_json(folder / PROVENANCE_NAME, "the provenance")
    entry = next((t for t in prov.get("transcripts", []) if t.get("file") == file), None)
    if entry is None or "turns" not in entry:
        return TranscriptReview(row=row, interview_id=None, turns=(), pairs=(),
                                why_no_turns=f"{folder / PROVENANCE_NAME} holds no turns for {file}: re-run "
                                             f"`interviewsim curate`")
    speakers = entry.get("speakers", {})
    turns = []
    for i, t in enumerate(entry["turns"]):
        a = speakers.get(unit_key(t["label"], i), {})
        turns.append(Turn(index=i, label=t["label"], line=t["line"], text=t["text"], role=a.get("role", "?"),
                          decided_by=a.get("decided_by", "?"), reason=a.get("reason", "")))
    iid, pairs = entry.get("interview_id"), []
    if iid:
        doc = _read_json(folder / DOCUMENT_NAME, "the corpus document")
        qa = next((i["qa_pairs"] for i in doc["interviews"] if i["interview_id"] == iid), [])
        pairs = [Pair(qa_id=q["qa_id"], question=q["question"], response=q["response"], raw_question=s["question"],
                      raw_response=s["response"], question_turn=s["question_turn"],
                      response_turns=tuple(s["response_turns"]))
                 for q, s in zip(qa, entry.get("raw_spans", []), strict=True)]
    return TranscriptReview(row=row, interview_id=iid, turns=tuple(turns), pairs=tuple(pairs))
