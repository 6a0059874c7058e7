"""Human labels saved from the explorer, in exactly the CSV ``human_labels_csv`` reads.

The labels file holds the five columns ``metrics.human_agreement.load_human_labels`` accepts (it
refuses extra columns, so a typo is never silently ignored); one row per (personality, method,
question, metric), the latest save winning, so the file always loads and the report's "Judge
agreement with human labels" section reads it as it is. Who labelled what, and when, goes to a
second file beside it (``<name>.reviewers.csv``: every save, never overwritten rows), because the
agreement CSV has no room for a reviewer and a second reviewer's label must not be lost.

Both are rewritten whole with ``atomic_files.atomic_write_text`` (temp file then rename) under one
process lock, so a crash or two reviewers saving at once never leave half a file.
"""

from __future__ import annotations

import csv
import io
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from interviewsim_core.atomic_files import atomic_write_text
from interviewsim_core.metrics.human_agreement import CS_LEVELS, FC_LABELS, HUMAN_COLUMNS, load_human_labels

__all__ = ["LabelError", "LabelFile", "REVIEW_COLUMNS"]

REVIEW_COLUMNS = (*HUMAN_COLUMNS, "reviewer", "saved_at")
_MAX_REVIEWER = 120


class LabelError(ValueError):
    """A label the agreement CSV would refuse (unknown metric, bad value, blank id or reviewer)."""


@dataclass(frozen=True)
class Label:
    personality_id: str
    method: str
    qa_id: str
    metric: str
    value: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.personality_id, self.method, self.qa_id, self.metric)


def check(personality_id: str, method: str, qa_id: str, metric: str, value: str) -> Label:
    """The label in the CSV's spelling, or LabelError naming the rule (the loader's rules)."""
    pid, method, qa, metric, value = (s.strip() for s in (personality_id, method, qa_id, metric, value))
    if not pid or not qa:
        raise LabelError("personality_id and qa_id must not be blank")
    if metric == "cs":
        if value not in {str(v) for v in CS_LEVELS}:
            raise LabelError("cs value must be an integer 1-5")
    elif metric == "fc":
        if value not in FC_LABELS:
            raise LabelError(f"fc value must be one of {', '.join(FC_LABELS)}")
    elif metric == "mcq_item_valid":
        if value not in ("1", "0"):
            raise LabelError("mcq_item_valid value must be 1 or 0")
        method = ""  # the CSV's rule: an MCQ item is judged without a method
    else:
        raise LabelError(f"unknown metric {metric!r}")
    if metric in ("cs", "fc") and not method:
        raise LabelError(f"{metric} labels name the method")
    if any("\n" in s or "\r" in s for s in (pid, method, qa)):
        raise LabelError("ids cannot hold line breaks")
    return Label(pid, method, qa, metric, value)


def _csv(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


class LabelFile:
    """The labels CSV of one explorer process (``path``), plus its reviewers log."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.log_path = self.path.with_name(self.path.stem + ".reviewers.csv")
        self._lock = threading.Lock()

    def _read(self) -> dict[tuple[str, str, str, str], Label]:
        if not self.path.is_file():
            return {}
        df = load_human_labels(self.path)  # the report's own reader: refuses a file it could not use
        out: dict[tuple[str, str, str, str], Label] = {}
        for r in df.itertuples(index=False):
            value = r.value
            text = ("1" if value else "0") if r.metric == "mcq_item_valid" else str(value)
            lab = Label(r.personality_id, r.method, r.qa_id, r.metric, text)
            out[lab.key] = lab
        return out

    def labels(self) -> list[Label]:
        with self._lock:
            return list(self._read().values())

    def for_question(self, personality_id: str, qa_id: str) -> dict[tuple[str, str], str]:
        """(method or item id, metric) -> value, for one question's labels (its MCQ items too)."""
        out: dict[tuple[str, str], str] = {}
        for lab in self.labels():
            if lab.personality_id != personality_id:
                continue
            if lab.metric == "mcq_item_valid" and lab.qa_id.startswith(f"{qa_id}#"):
                out[(lab.qa_id, lab.metric)] = lab.value
            elif lab.qa_id == qa_id:
                out[(lab.method, lab.metric)] = lab.value
        return out

    def save(self, label: Label, reviewer: str) -> None:
        """Add or replace one label; append the save to the reviewers log. Both files atomically."""
        reviewer = " ".join(reviewer.split())
        if not reviewer:
            raise LabelError("give your name as reviewer")
        if len(reviewer) > _MAX_REVIEWER:
            raise LabelError(f"reviewer name over {_MAX_REVIEWER} characters")
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self._lock:
            current = self._read()
            current[label.key] = label
            rows = [(lb.personality_id, lb.method, lb.qa_id, lb.metric, lb.value)
                    for lb in sorted(current.values(), key=lambda lb: lb.key)]
            log = self.log_path.read_text(encoding="utf-8") if self.log_path.is_file() else _csv([], REVIEW_COLUMNS)
            entry = _csv([(*label.key, label.value, reviewer, stamp)], REVIEW_COLUMNS).split("\n", 1)[1]
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Log first: a crash between the two leaves a logged save, never an unlogged label.
            atomic_write_text(self.log_path, log + entry)
            atomic_write_text(self.path, _csv(rows, HUMAN_COLUMNS))
