"""A human validation *study*: the paper's protocol (seed 001, section 3.3 and appendix F).

A study is a seeded, stratified sample of tasks of four kinds, each assigned to two reviewers:

- ``cs_pair``: a question, the person's answer and two candidates (A, B) whose CS scores by one
  judge differ by 1-4 (stratified by gap); the reviewer chooses A, B or Tie with a confidence.
- ``fc_label``: a candidate, the fact summary and one judge's FC label with its explanation; the
  reviewer says whether the label is correct (Yes / No / Unsure) and gives the right label when not.
- ``fact_statement``: one fact-summary statement and the source Q&A it was built from; does the
  statement contradict the source (Yes / No / Unsure)?
- ``mcq``: an MCQ item and its source Q&A; the reviewer answers it from the source (gold hidden).

What a reviewer sees (``reviewer_view``) never holds the judges' scores, the methods, the gold
option nor the other reviewer's label. Disagreements between the two reviews go to an adjudication
queue; an adjudication (any reviewer name, with a written justification) settles the task.

Storage: ``<data_root>/studies/<study_id>/study.json`` written once, and ``labels/`` with one JSON
file per label (written atomically under a fresh unique name, never overwritten): every label is its
own row with its reviewer and time; a reviewer's later label of a task supersedes their earlier one
in the figures, and both stay on disk and in the CSV export.
"""

from __future__ import annotations

import csv
import io
import json
import random
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..atomic_files import atomic_write_text
from ..errors import ConfigError

KINDS = ("cs_pair", "fc_label", "fact_statement", "mcq")
GAPS = (1, 2, 3, 4)
FC_LABELS = ("Entailment", "Neutral", "Contradiction")
STUDIES_DIR = "studies"


class Task(BaseModel):
    """One item to review; ``shown`` is what reviewers see, ``hidden`` what only the figures use."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    kind: Literal["cs_pair", "fc_label", "fact_statement", "mcq"]
    reviewers: tuple[str, str]
    shown: dict[str, Any]
    hidden: dict[str, Any]


class Study(BaseModel):
    model_config = ConfigDict(frozen=True)

    study_id: str
    seed: int
    created: str
    reviewers: tuple[str, ...]
    tasks: tuple[Task, ...]

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.task_id == task_id:
                return t
        raise KeyError(f"study {self.study_id!r} has no task {task_id!r}")


class Label(BaseModel):
    """One label row. ``role`` review: one of the task's two reviewers; adjudication: settles a
    disagreement and needs a justification."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    reviewer: str = Field(min_length=1)
    role: Literal["review", "adjudication"] = "review"
    time: str = ""
    choice: Literal["A", "B", "Tie"] | None = None
    confidence: Literal["High", "Medium", "Low"] | None = None
    correct: Literal["Yes", "No", "Unsure"] | None = None
    right_label: Literal["Entailment", "Neutral", "Contradiction"] | None = None
    contradicts: Literal["Yes", "No", "Unsure"] | None = None
    answer: str | None = None
    justification: str = ""

    @model_validator(mode="after")
    def _adjudication_justified(self) -> Label:
        if self.role == "adjudication" and not self.justification.strip():
            raise ValueError("an adjudication needs a written justification")
        return self


def outcome(kind: str, label: Label) -> Any:
    """What two labels of a task must share to agree (the task's answer)."""
    if kind == "cs_pair":
        return label.choice
    if kind == "fc_label":
        return (label.correct, label.right_label if label.correct == "No" else None)
    if kind == "fact_statement":
        return label.contradicts
    return label.answer


REQUIRED = {"cs_pair": ("choice", "confidence"), "fc_label": ("correct",), "fact_statement": ("contradicts",),
            "mcq": ("answer",)}


def check_label(task: Task, label: Label) -> list[str]:
    """Every problem with ``label`` for ``task`` (empty: acceptable)."""
    problems = [f"{f} is required for a {task.kind} task" for f in REQUIRED[task.kind] if getattr(label, f) in (None, "")]
    if task.kind == "fc_label" and label.correct == "No" and label.right_label is None:
        problems.append("the right label is required when the judge's label is not correct")
    if task.kind == "mcq" and label.answer and label.answer not in task.shown["labels"]:
        problems.append(f"answer {label.answer!r} is not one of {task.shown['labels']}")
    if label.role == "review" and label.reviewer not in task.reviewers:
        problems.append(f"{label.reviewer!r} is not assigned to task {task.task_id} ({', '.join(task.reviewers)})")
    return problems


# ---- sampling -----------------------------------------------------------------------------------


def _pairs(reviewers: tuple[str, ...], i: int) -> tuple[str, str]:
    n = len(reviewers)
    return reviewers[i % n], reviewers[(i + 1) % n]


def _take(rng: random.Random, rows: list[dict], n: int) -> list[dict]:
    return rng.sample(rows, min(n, len(rows)))


def sample_tasks(tables: dict[str, pd.DataFrame], *, seed: int, per_kind: int,
                 reviewers: tuple[str, ...]) -> list[Task]:
    """The stratified sample: CS pairs evenly over gaps 1-4, FC judgments evenly over labels, fact
    statements and MCQ items at random; each with two reviewers in rotation. Same tables and seed:
    same tasks."""
    if len(reviewers) < 2 or len(set(reviewers)) != len(reviewers):
        raise ConfigError(f"a study needs at least two distinct reviewers, got {list(reviewers)}")
    rng = random.Random(seed)
    held = tables.get("heldout_split", pd.DataFrame())
    source = {(r["personality_id"], r["qa_id"]): r for r in held.to_dict("records")} if not held.empty else {}
    gens = tables.get("generations", pd.DataFrame())
    text = {(r["personality_id"], r["method"], r["qa_id"]): r["generated"] for r in gens.to_dict("records")
            if isinstance(r.get("generated"), str)} if not gens.empty else {}
    out: list[dict] = []

    cs = tables.get("content_similarity", pd.DataFrame())
    if not cs.empty:
        ok = cs[(cs["status"] == "ok") & cs["score"].notna()].sort_values(["personality_id", "qa_id", "judge", "method"])
        by_gap: dict[int, list[dict]] = {g: [] for g in GAPS}
        for (pid, qa, judge), g in ok.groupby(["personality_id", "qa_id", "judge"], sort=True):
            rows = g.to_dict("records")
            for i, a in enumerate(rows):
                for b in rows[i + 1:]:
                    gap = abs(int(a["score"]) - int(b["score"]))
                    if gap in by_gap and (pid, a["method"], qa) in text and (pid, b["method"], qa) in text:
                        by_gap[gap].append({"a": a, "b": b})
        quota = max(1, per_kind // len(GAPS))
        for gap in GAPS:
            for pair in _take(rng, by_gap[gap], quota):
                a, b = (pair["a"], pair["b"]) if rng.random() < 0.5 else (pair["b"], pair["a"])
                pid, qa = a["personality_id"], a["qa_id"]
                src = source.get((pid, qa), {})
                out.append({"kind": "cs_pair", "shown": {
                    "question": src.get("question", ""), "reference": src.get("response", ""),
                    "response_a": text[(pid, a["method"], qa)], "response_b": text[(pid, b["method"], qa)]},
                    "hidden": {"personality_id": pid, "qa_id": qa, "judge": a["judge"], "gap": gap,
                               "score_a": int(a["score"]), "score_b": int(b["score"]),
                               "method_a": a["method"], "method_b": b["method"]}})

    fc = tables.get("factual_consistency", pd.DataFrame())
    summaries = tables.get("fact_summary", pd.DataFrame())
    facts = {r["personality_id"]: r["summary"] for r in summaries.to_dict("records")
             if isinstance(r.get("summary"), str)} if not summaries.empty else {}
    if not fc.empty:
        ok = fc[(fc["status"] == "ok") & fc["label"].isin(FC_LABELS)].sort_values(
            ["personality_id", "qa_id", "judge", "method"])
        quota = max(1, per_kind // len(FC_LABELS))
        for lab in FC_LABELS:
            rows = [r for r in ok[ok["label"] == lab].to_dict("records")
                    if (r["personality_id"], r["method"], r["qa_id"]) in text]
            for r in _take(rng, rows, quota):
                pid = r["personality_id"]
                out.append({"kind": "fc_label", "shown": {
                    "response": text[(pid, r["method"], r["qa_id"])], "facts": facts.get(pid, ""),
                    "judge_label": r["label"], "judge_explanation": r.get("explanation") or ""},
                    "hidden": {"personality_id": pid, "qa_id": r["qa_id"], "judge": r["judge"],
                               "method": r["method"], "judge_label": r["label"]}})

    if not summaries.empty:
        rows = []
        for r in summaries.to_dict("records"):
            if not isinstance(r.get("summary"), str):
                continue
            pid = r["personality_id"]
            qa_ids = list(r.get("source_qa_ids") if r.get("source_qa_ids") is not None else [])
            src = "\n\n".join(f"Q: {source[(pid, q)]['question']}\nA: {source[(pid, q)]['response']}"
                              for q in qa_ids if (pid, q) in source)
            for i, line in enumerate(s.strip(" -*\t") for s in r["summary"].splitlines()):
                if line:
                    rows.append({"kind": "fact_statement", "shown": {"statement": line, "source": src},
                                 "hidden": {"personality_id": pid, "statement_index": i}})
        out += _take(rng, rows, per_kind)

    items = tables.get("mcq_items", pd.DataFrame())
    if not items.empty:
        rows = []
        for r in items[items["status"] == "ok"].sort_values("item_id").to_dict("records"):
            src = source.get((r["personality_id"], r["qa_id"]))
            if src is None:
                continue
            rows.append({"kind": "mcq", "shown": {
                "question": r["question"], "labels": list(r["labels"]), "texts": list(r["texts"]),
                "source_question": src["question"], "source_response": src["response"]},
                "hidden": {"personality_id": r["personality_id"], "item_id": r["item_id"],
                           "gold": r["correct_label"]}})
        out += _take(rng, rows, per_kind)

    return [Task(task_id=f"T{i + 1:04d}", kind=t["kind"], reviewers=_pairs(reviewers, i), shown=t["shown"],
                 hidden=t["hidden"]) for i, t in enumerate(out)]


def reviewer_view(task: Task) -> dict[str, Any]:
    """What a reviewer may see: the task's id, kind and ``shown`` only (no scores, methods, gold)."""
    return {"task_id": task.task_id, "kind": task.kind, **task.shown}


# ---- storage ------------------------------------------------------------------------------------


def study_dir(data_root: Path | str, study_id: str) -> Path:
    if not study_id or not all(c.isalnum() or c in "-_" for c in study_id):
        raise ConfigError(f"study id {study_id!r}: letters, digits, '-' and '_' only")
    return Path(data_root) / STUDIES_DIR / study_id


def create_study(data_root: Path | str, study_id: str, tables: dict[str, pd.DataFrame], *, seed: int = 0,
                 per_kind: int = 20, reviewers: tuple[str, ...] = ("reviewer-1", "reviewer-2")) -> Study:
    """Sample and write a new study. Raises ConfigError when the id is taken or nothing can be sampled."""
    folder = study_dir(data_root, study_id)
    if (folder / "study.json").exists():
        raise ConfigError(f"study {study_id!r} already exists at {folder}")
    tasks = sample_tasks(tables, seed=seed, per_kind=per_kind, reviewers=tuple(reviewers))
    if not tasks:
        raise ConfigError("nothing to sample: the run has no judged candidates, fact summaries or MCQ items")
    study = Study(study_id=study_id, seed=seed, created=_now(), reviewers=tuple(reviewers), tasks=tuple(tasks))
    atomic_write_text(folder / "study.json", study.model_dump_json(indent=1))
    return study


def load_study(data_root: Path | str, study_id: str) -> Study:
    path = study_dir(data_root, study_id) / "study.json"
    if not path.is_file():
        raise ConfigError(f"no study {study_id!r} at {path}")
    return Study.model_validate_json(path.read_text(encoding="utf-8"))


def list_studies(data_root: Path | str) -> list[str]:
    root = Path(data_root) / STUDIES_DIR
    return sorted(p.name for p in root.iterdir() if (p / "study.json").is_file()) if root.is_dir() else []


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def add_label(data_root: Path | str, study: Study, label: Label) -> Label:
    """Validate and store one label as its own file (atomic, never overwritten); returns it with its time.

    Raises:
        ConfigError: every problem with the label (unknown task, missing answer, unassigned reviewer,
            an adjudication of a task without a disagreement).
    """
    try:
        task = study.task(label.task_id)
    except KeyError as exc:
        raise ConfigError(str(exc.args[0])) from None
    problems = check_label(task, label)
    if label.role == "adjudication" and not problems:
        state = task_states(study, load_labels(data_root, study))[task.task_id]
        if state["status"] not in ("disagreement", "adjudicated"):
            problems.append(f"task {task.task_id} has no disagreement to adjudicate (status {state['status']})")
    if problems:
        raise ConfigError(f"label for {label.task_id} by {label.reviewer!r}: " + "; ".join(problems))
    stamped = label.model_copy(update={"time": _now()})
    name = f"{stamped.time.replace(':', '').replace('+', 'Z')}-{uuid.uuid4().hex[:12]}.json"
    path = study_dir(data_root, study.study_id) / "labels" / name
    if path.exists():  # a fresh uuid: never expected, never overwritten
        raise ConfigError(f"label file {path} exists")
    atomic_write_text(path, stamped.model_dump_json())
    return stamped


def load_labels(data_root: Path | str, study: Study) -> list[Label]:
    """Every label row of the study, oldest first."""
    folder = study_dir(data_root, study.study_id) / "labels"
    if not folder.is_dir():
        return []
    rows = [Label.model_validate_json(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    return sorted(rows, key=lambda r: r.time)


def task_states(study: Study, labels: list[Label]) -> dict[str, dict[str, Any]]:
    """Per task: each reviewer's latest review, the adjudication (latest), agreement and the final label.

    status: ``open`` (fewer than two reviews), ``agreed``, ``disagreement`` (in the adjudication
    queue) or ``adjudicated``.
    """
    states: dict[str, dict[str, Any]] = {}
    for t in study.tasks:
        mine = [lb for lb in labels if lb.task_id == t.task_id]
        reviews = {r: next((lb for lb in reversed(mine) if lb.role == "review" and lb.reviewer == r), None)
                   for r in t.reviewers}
        adjudication = next((lb for lb in reversed(mine) if lb.role == "adjudication"), None)
        a, b = (reviews[r] for r in t.reviewers)
        if a is None or b is None:
            status, final, agree = "open", None, None
        else:
            agree = outcome(t.kind, a) == outcome(t.kind, b)
            status = "agreed" if agree else ("adjudicated" if adjudication is not None else "disagreement")
            final = a if agree else adjudication
        states[t.task_id] = {"task": t, "reviews": reviews, "adjudication": adjudication, "agree": agree,
                             "status": status, "final": final}
    return states


def queue_for(study: Study, labels: list[Label], reviewer: str) -> list[Task]:
    """Tasks assigned to ``reviewer`` that they have not labelled yet."""
    states = task_states(study, labels)
    return [t for t in study.tasks if reviewer in t.reviewers and states[t.task_id]["reviews"][reviewer] is None]


def adjudication_queue(study: Study, labels: list[Label]) -> list[Task]:
    states = task_states(study, labels)
    return [t for t in study.tasks if states[t.task_id]["status"] == "disagreement"]


LABEL_CSV_COLUMNS = ["study_id", "task_id", "kind", "reviewer", "role", "time", "choice", "confidence", "correct",
                     "right_label", "contradicts", "answer", "justification"]


def labels_csv(study: Study, labels: list[Label]) -> str:
    """Every label row (superseded ones included), as CSV."""
    kinds = {t.task_id: t.kind for t in study.tasks}
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=LABEL_CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for lb in labels:
        row = json.loads(lb.model_dump_json())
        w.writerow({"study_id": study.study_id, "kind": kinds.get(lb.task_id, ""),
                    **{k: ("" if row.get(k) is None else row[k]) for k in LABEL_CSV_COLUMNS[1:] if k != "kind"}})
    return buf.getvalue()
