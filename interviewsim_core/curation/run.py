"""The curation steps in order: manifest -> ingest -> attribution -> quality -> QA -> tags -> corpus.

Defined once, as step functions (``ingest``; a ``*_calls`` / apply pair per model step; ``build_corpus``)
over an ``Outcome``: ``curate_with`` composes them for ``interviewsim curate`` (``curate``: every
personality, each step's calls in one gateway batch) and ``plan.py``; the graph's curation steps
(``step.py``) call each one for one personality, on the state rebuilt from the tables before it.

Each model step plans its calls for every personality first and runs them in one gateway batch
(``pipeline.calls.run_calls``: cache, cost plan and budget gate apply, re-runs are free). A
personality with any input problem (a manifest row, an unreadable or unrecognised file, a
transcript where the person never speaks, a failed attribution) is refused as a whole and nothing is
written for it; the others proceed. Excluded transcripts (quality control) stay in the report
table with their reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..contracts import version_of
from ..errors import Problem
from ..llm.types import ModelConfig
from ..pipeline.calls import CallRunner, PlannedCall, run_calls
from . import attribution, corpus, quality, review, structuring, tagging
from .ingest import ingest_file
from .manifest import read_manifest
from .models import Attribution, ManifestRow, QAPairDraft, Role, Transcript

STEPS = {"speaker_turns": "speaker_attribution", "transcript_quality": "transcript_quality", "qa_pairs": "qa_structuring",
         "qa_tags": "thematic_tagging", "personality_category": "personality_category"}


@dataclass
class Curated:
    """What one transcript became."""

    row: ManifestRow
    transcript: Transcript | None = None
    attributions: dict[str, Attribution] = field(default_factory=dict)
    roles: list[Role] = field(default_factory=list)
    keep: bool = False
    kind: str = ""
    reason: str = ""
    quality: tuple[bool, str, str] | None = None
    """Quality control's own (keep, kind, reason), kept apart from a reviewer's decision that may override it."""
    review: tuple[str, str] | None = None
    """The reviewer's (decision, reason) this run applied, if any."""
    pairs: list[QAPairDraft] = field(default_factory=list)
    tags: list[tuple[str, ...]] = field(default_factory=list)


@dataclass
class Outcome:
    """Everything a curation run produced, for the CLI's summary, the report file and the comparison."""

    written: dict[str, Path] = field(default_factory=dict)
    refused: dict[str, list[str]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    transcripts: dict[str, list[Curated]] = field(default_factory=dict)
    categories: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: int = 0

    def excluded(self) -> dict[str, dict[str, str]]:
        """personality -> date -> why quality control excluded that transcript (for the comparison's reasons)."""
        return {pid: {c.row.date: f"excluded by quality control as {c.kind}" for c in items if c.kind and not c.keep}
                for pid, items in self.transcripts.items()}

    def table(self) -> list[dict[str, Any]]:
        """One row per transcript: personality, file, format, turns, verdict, reason, pairs, removed counts."""
        rows = []
        for pid, items in sorted(self.transcripts.items()):
            for c in items:
                t = c.transcript
                rows.append({"personality_id": pid, "file": c.row.file, "date": c.row.date,
                             "format": t.format if t else None, "turns": len(t.turns) if t else 0,
                             "kept": c.keep, "kind": c.kind, "reason": c.reason, "pairs": len(c.pairs),
                             "removed": t.removed if t else {},
                             "quality_kept": c.quality[0] if c.quality else None,
                             "quality_kind": c.quality[1] if c.quality else None,
                             "quality_reason": c.quality[2] if c.quality else None,
                             "review_decision": c.review[0] if c.review else None,
                             "review_reason": c.review[1] if c.review else None})
        return rows


Ask = Callable[[list[PlannedCall]], Mapping[Hashable, Any]]
"""Answers one step's planned calls: the gateway (``run_calls``) in ``curate``; a planning runner in ``plan.py``."""


def _run(ask: Ask, planned: list[PlannedCall], outcome: Outcome) -> Mapping[Hashable, Any]:
    outcome.calls += len(planned)
    return ask(planned)


def _refuse(outcome: Outcome, pid: str, why: str) -> None:
    outcome.refused.setdefault(pid, []).append(why)


def _read_text(folder: Path, rel: str) -> str:
    return (folder / rel).read_text(encoding="utf-8").strip() if rel else ""


def curate(folder: Path | str, manifest: Path | str, gateway: CallRunner, model: ModelConfig,
           out: Path | str | None = None) -> Outcome:
    """Run the whole curation; write the corpus under ``out`` when given (else only return it)."""
    return curate_with(folder, manifest, lambda planned: run_calls(gateway, planned), model, out)


def curate_with(folder: Path | str, manifest: Path | str, ask: Ask, model: ModelConfig,
                out: Path | str | None = None, personalities: Collection[str] | None = None,
                write: bool = True) -> Outcome:
    """The curation, each round of model calls answered by ``ask``: the step functions below in order, every
    personality's calls of one step in one round (the graph's steps call the same functions per personality).

    ``personalities``: curate only these; the corpus-wide ``curation_report.json`` and ``categories.csv`` then
    keep the other personalities' entries (updated under ``corpus.corpus_lock``, so the explorer's review pages
    read either way of curating). ``out`` is also where reviewers' decisions are read from; ``write=False``
    reads them but writes nothing and builds no document (``plan.py``: every call is made before the corpus is
    built, and a personality under the split's minimum is still refused, so ``refused`` stays true;
    ``documents`` stays empty).
    """
    folder = Path(folder)
    outcome = ingest(folder, manifest, personalities)
    attribute(outcome, _run(ask, attribution_calls(outcome, model), outcome))
    judge_quality(outcome, _run(ask, quality_calls(outcome, model), outcome), out)
    structure(outcome, _run(ask, structuring_calls(outcome, model), outcome))
    tag(outcome, _run(ask, tagging_calls(outcome, folder, model), outcome))
    build_corpus(outcome, folder, model, out, personalities, write)
    return outcome


def live(outcome: Outcome) -> dict[str, list[Curated]]:
    """The personalities still being curated: ingested, and refused by no step so far."""
    return {pid: items for pid, items in outcome.transcripts.items() if pid not in outcome.refused}


def ingest(folder: Path | str, manifest: Path | str, personalities: Collection[str] | None = None) -> Outcome:
    """Step 1 (no model): the manifest's rows of ``personalities`` (default: all) and every file they name
    as ordered turns. A personality with a manifest problem, an unreadable or unrecognised file, or no row
    is refused here (``outcome.refused``), with every problem listed."""
    folder = Path(folder)
    outcome = Outcome()
    m = read_manifest(manifest, folder)
    wanted = None if personalities is None else set(personalities)
    unnamed = set() if wanted is None else wanted - {r.personality_id for r in m.rows}
    # A manifest problem names a row, not a personality: listed for a personality refused by one (or with no good row).
    outcome.problems += m.problems if wanted is None or wanted & m.refused or unnamed else []
    outcome.warnings += [w for w in m.warnings if wanted is None or any(f": {p}: " in w for p in wanted)]
    by_pid: dict[str, list[Curated]] = defaultdict(list)
    for row in m.rows:
        if wanted is None or row.personality_id in wanted:
            by_pid[row.personality_id].append(Curated(row=row))
    for pid in sorted(m.refused if wanted is None else m.refused & wanted):
        _refuse(outcome, pid, "a manifest row of this personality has a problem")
    for pid in sorted(unnamed - m.refused):
        _refuse(outcome, pid, "no row of the manifest names this personality")
    for pid, items in by_pid.items():
        for c in items:
            c.transcript, file_problems = ingest_file(folder, c.row.file)
            outcome.problems += file_problems
            if file_problems:
                _refuse(outcome, pid, f"{c.row.file}: {file_problems[0].rule}")
    outcome.transcripts = dict(by_pid)
    return outcome


def attribution_calls(outcome: Outcome, model: ModelConfig) -> list[PlannedCall]:
    """Step 2's calls (speaker attribution): one per transcript with labels the rule cannot place."""
    return [p for pid, items in live(outcome).items() for c in items
            for p in attribution.plan(pid, c.transcript, c.row, model)]


def attribute(outcome: Outcome, results: Mapping[Hashable, Any]) -> None:
    """Step 2: every turn's role (rule + answers); a failed call or a person who never speaks refuses the personality."""
    for pid, items in live(outcome).items():
        for c in items:
            c.attributions, att_problems = attribution.assemble(pid, c.transcript, c.row, results)
            outcome.problems += att_problems
            if att_problems:
                _refuse(outcome, pid, f"{c.row.file}: {att_problems[0].rule}")
            else:
                c.roles = attribution.roles_of(c.transcript, c.attributions)


def quality_calls(outcome: Outcome, model: ModelConfig) -> list[PlannedCall]:
    """Step 3's calls (quality control): one per transcript; it reads the roles of step 2."""
    return [quality.plan(pid, c.row.person_name, c.transcript, c.roles, model)
            for pid, items in live(outcome).items() for c in items]


def judge_quality(outcome: Outcome, results: Mapping[Hashable, Any], corpus: Path | str | None) -> None:
    """Step 3: each transcript's verdict, then the reviewer's decision recorded under ``corpus`` (it wins)."""
    decisions, review_problems = review.read_decisions(corpus) if corpus is not None else ({}, [])
    outcome.warnings += [str(p) for p in review_problems]
    for pid, items in live(outcome).items():
        for c in items:
            c.quality = quality.verdict(pid, c.transcript, results)
            c.review = decisions.get(c.row.file)  # human verification wins over the automated verdict
            c.keep, c.kind, c.reason = review.apply(c.quality, c.review)


def structuring_calls(outcome: Outcome, model: ModelConfig) -> list[PlannedCall]:
    """Step 4's calls (QA structuring): one per kept transcript (the offline model answers with the rule)."""
    return [structuring.plan(pid, c.row.person_name, c.transcript, c.roles, model)
            for pid, items in live(outcome).items() for c in items if c.keep]


def structure(outcome: Outcome, results: Mapping[Hashable, Any]) -> None:
    """Step 4: the QA pairs of every kept transcript, with their raw spans; a failed call is a warning."""
    for pid, items in live(outcome).items():
        for c in items:
            if c.keep:
                c.pairs, failure = structuring.assemble(pid, c.transcript, results)
                if failure:
                    outcome.warnings.append(failure)


def tagging_calls(outcome: Outcome, folder: Path | str, model: ModelConfig) -> list[PlannedCall]:
    """Step 5's calls (thematic tagging): one per kept transcript with pairs, one per personality (its category)."""
    people = live(outcome)
    planned = [p for pid, items in people.items() for c in items if c.keep
               for p in tagging.plan_pairs(pid, c.row.file, c.pairs, model)]
    planned += [tagging.plan_category(pid, items[0].row.person_name, _profiles(Path(folder), items)[0],
                                      [p.question for c in items for p in c.pairs], model)
                for pid, items in people.items()]
    return planned


def tag(outcome: Outcome, results: Mapping[Hashable, Any]) -> None:
    """Step 5: each pair's thematic tag and each personality's category; a failed call is a warning."""
    for pid, items in live(outcome).items():
        for c in items:
            if c.keep:
                c.tags, failure = tagging.pair_tags(pid, c.row.file, c.pairs, results)
                if failure:
                    outcome.warnings.append(failure)
        outcome.categories[pid] = tagging.category(pid, results)


def build_corpus(outcome: Outcome, folder: Path | str, model: ModelConfig, out: Path | str | None,
                 personalities: Collection[str] | None = None, write: bool = True) -> None:
    """Step 7, the corpus: each live personality's document (its kept transcripts with pairs, by date) and
    provenance under ``out``, or its refusal when under the split's minimum; then ``categories.csv`` and
    ``curation_report.json`` (whole, or only ``personalities``' entries replaced). ``write=False``: the
    refusals only (``curate_with``)."""
    folder = Path(folder)
    for pid, items in live(outcome).items():
        ordered = sorted((c for c in items if c.keep and c.pairs), key=lambda c: c.row.date)  # stable: row order on ties
        if len(ordered) < corpus.MIN_INTERVIEWS:
            kept = sum(c.keep for c in items)
            _refuse(outcome, pid, f"{len(ordered)} interview(s) with QA pairs (of {len(items)} transcripts, {kept} "
                                  f"kept by quality control); the chronological split needs {corpus.MIN_INTERVIEWS}")
            continue
        if not write:
            continue
        profile, long_profile = _profiles(folder, items)
        doc, ids = corpus.build_document(pid, profile, long_profile, [(c.row, c.pairs, c.tags) for c in ordered])
        outcome.documents[pid] = doc
        if out is not None:
            outcome.written[pid] = corpus.write_personality(Path(out), pid, doc, _provenance(folder, pid, items, ordered, ids, outcome, model))
    if out is not None and write:
        categories = {p: c for p, (c, _r) in outcome.categories.items() if c and p in outcome.documents}
        if personalities is None:
            corpus.write_categories(Path(out), categories)
            corpus.write_report(Path(out), report_of(outcome))
        else:
            wanted = set(personalities)
            with corpus.corpus_lock(Path(out)):
                corpus.update_categories(Path(out), categories, wanted)
                corpus.update_report(Path(out), report_of(outcome), wanted,
                                     {c.row.file for items in outcome.transcripts.values() for c in items})


def _profiles(folder: Path, items: list[Curated]) -> tuple[str, str]:
    """(profile, long_profile): the first row of the personality that names each file; "" when none does."""
    prof = next((c.row.profile_file for c in items if c.row.profile_file), "")
    long = next((c.row.long_profile_file for c in items if c.row.long_profile_file), "")
    return _read_text(folder, prof), _read_text(folder, long)


def _provenance(folder: Path, pid: str, items: list[Curated], ordered: list[Curated], ids: list[str],
                outcome: Outcome, model: ModelConfig) -> dict[str, Any]:
    iid = {id(c): i for c, i in zip(ordered, ids)}
    cat, why = outcome.categories.get(pid, (None, ""))
    return {
        "personality_id": pid,
        "person_name": items[0].row.person_name,
        "category": cat, "category_reason": why,
        "steps": {"ingest": {"model": None, "rule": "curation.ingest"},
                  **{step: {"model": model.name, "contract": name, "prompt_version": version_of(name)}
                     for step, name in STEPS.items()}},
        "transcripts": [
            {"file": c.row.file, "sha256": corpus.sha256_of(folder / c.row.file), "date": c.row.date,
             "title": c.row.title, "source_url": c.row.source_url, "interview_id": iid.get(id(c)),
             "format": c.transcript.format, "removed": c.transcript.removed,
             "kept": c.keep, "kind": c.kind, "reason": c.reason, "pairs": len(c.pairs),
             "speakers": {k: a.model_dump() for k, a in c.attributions.items()},
             "turns": [{"label": t.label, "line": t.line, "text": t.text} for t in c.transcript.turns],
             "raw_spans": [{"question": p.raw_question, "response": p.raw_response, "question_turn": p.question_turn,
                            "response_turns": list(p.response_turns)} for p in c.pairs]}
            for c in items],
    }


def report_of(outcome: Outcome) -> dict[str, Any]:
    """The run's report as JSON data (what ``curation_report.json`` holds)."""
    return {
        "written": {p: str(f) for p, f in sorted(outcome.written.items())},
        "refused": dict(sorted(outcome.refused.items())),
        "problems": [str(p) for p in outcome.problems],
        "warnings": outcome.warnings,
        "categories": {p: {"category": c, "reason": r} for p, (c, r) in sorted(outcome.categories.items())},
        "model_calls": outcome.calls,
        "transcripts": outcome.table(),
    }
