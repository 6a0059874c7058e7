"""Human verification decisions (the paper's annotators): accept or reject a transcript, with a reason.

Decisions live in ``<corpus>/review.csv`` (``file``, ``decision`` accept/reject, ``reason``), one row
per transcript, rewritten atomically on each decision; a re-run of the curation honours them: a
rejected transcript is excluded with the reviewer's reason whatever quality control said, an
accepted one is kept even if quality control excluded it. The retention rate (kept / all) is what
the paper reports as 73.5%.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from ..atomic_files import atomic_write
from ..errors import Problem

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
