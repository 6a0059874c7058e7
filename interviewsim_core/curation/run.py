"""The curation steps in order: manifest -> ingest -> attribution -> quality -> QA -> tags -> corpus.

Defined once, as step functions (``ingest``; a ``*_calls`` / apply pair per model step; ``build_corpus``)
over an ``Outcome``: ``curate_with`` composes them for ``interviewsim curate`` (``curate``: every
personality, each step's calls in one gateway batch) and ``plan.py``; the graph's curation steps
(``step.py``) call each one for one personality, on the state rebuilt from the tables before it.

Each model step plans its calls for every personality first and runs them in one gateway batch
(``pipeline.calls.run_calls``: cache, cost plan and budget gate apply, re-runs are free). One bad item never
sinks a personality: a manifest row with a problem, or a file that cannot be read as text (empty, binary,
undecodable, unreadable), is refused on its own and listed as a problem (file, row or line, rule); a transcript
that is not a dialogue (no speaker label) or in which the person never speaks is excluded with that reason,
exactly like a quality-control exclusion, which a reviewer can override. A personality is refused only when
what remains is under the split's minimum, with the count of transcripts excluded per reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict
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
    excluded: tuple[str, str] | None = None
    """(kind, reason) when a step before quality control set the transcript aside: ``refused`` (a file that cannot
    be read), ``not-a-dialogue`` (no speaker label), ``person-never-speaks`` or ``failed`` (its attribution call)."""
    quality: tuple[bool, str, str] | None = None
    """Quality control's own (keep, kind, reason), kept apart from a reviewer's decision that may override it; for
    a transcript set aside before quality control, that exclusion (the same columns, the same review)."""
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
        return {pid: {c.row.date: f"excluded as {c.kind}" for c in items if c.kind and not c.keep}
                for pid, items in self.transcripts.items()}

    def personalities(self) -> dict[str, dict[str, Any]]:
        """Per personality: transcripts, kept, excluded by reason, QA pairs written, and whether it was written."""
        out = {}
        excluded: dict[str, Counter[str]] = defaultdict(Counter)
        for r in self.table():
            if not r["kept"]:
                excluded[r["personality_id"]][r["kind"]] += 1
        for pid, items in sorted(self.transcripts.items()):
            doc = self.documents.get(pid)
            out[pid] = {"transcripts": len(items), "kept": sum(c.keep for c in items),
                        "excluded": dict(sorted(excluded[pid].items())),
                        "pairs": sum(len(i["qa_pairs"]) for i in doc["interviews"]) if doc else 0,
                        "written": pid in self.documents or pid in self.written}
        return out

    def labels(self) -> dict[str, list[dict[str, Any]]]:
        """Per personality, per label: how it was attributed (rule, answerer, review, model, failed), its role, the
        turns it covers and in how many transcripts; most turns first."""
        out = {}
        for pid, items in sorted(self.transcripts.items()):
            turns: Counter[tuple[str, str, str]] = Counter()
            files: Counter[tuple[str, str, str]] = Counter()
            for c in items:
                if c.transcript is None or not c.attributions:
                    continue
                per = Counter(attribution.unit_key(t.label, t.index) for t in c.transcript.turns)
                for key, a in c.attributions.items():
                    k = ("" if key.startswith("#") else key, a.role, a.decided_by)
                    turns[k] += per[key]
                    files[k] += 1
            out[pid] = [{"label": lab or "(unlabelled)", "role": role, "decided_by": by, "turns": n,
                         "transcripts": files[(lab, role, by)]} for (lab, role, by), n in turns.most_common()]
        return out

    def table(self) -> list[dict[str, Any]]:
        """One row per transcript: personality, file, format, turns, verdict, reason, pairs, removed counts."""
        rows = []
        for pid, items in sorted(self.transcripts.items()):
            for c in items:
                t = c.transcript
                quality = c.quality or ((False, *c.excluded) if c.excluded else None)
                kind, reason = ((c.kind, c.reason) if c.kind else quality[1:] if quality
                                else ("personality-refused", "; ".join(self.refused[pid])) if pid in self.refused
                                else ("", ""))
                rows.append({"personality_id": pid, "file": c.row.file, "date": c.row.date,
                             "format": t.format if t else None, "turns": len(t.turns) if t else 0,
                             "kept": c.keep, "kind": kind, "reason": reason, "pairs": len(c.pairs),
                             "removed": t.removed if t else {},
                             "quality_kept": quality[0] if quality else None,
                             "quality_kind": quality[1] if quality else None,
                             "quality_reason": quality[2] if quality else None,
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
    accepted = accepted_files(out)
    attribute(outcome, _run(ask, attribution_calls(outcome, model, accepted), outcome), model, accepted)
    judge_quality(outcome, _run(ask, quality_calls(outcome, model), outcome), out)
    structure(outcome, _run(ask, structuring_calls(outcome, model), outcome))
    tag(outcome, _run(ask, tagging_calls(outcome, folder, model), outcome))
    build_corpus(outcome, folder, model, out, personalities, write)
    return outcome


def live(outcome: Outcome) -> dict[str, list[Curated]]:
    """The personalities still being curated: ingested, and refused by no step so far."""
    return {pid: items for pid, items in outcome.transcripts.items() if pid not in outcome.refused}


READ_ERRORS_EXCLUDE = {"unrecognised-format": "not-a-dialogue", "no-turns": "not-a-dialogue"}
"""Ingest's findings that exclude a transcript as quality control would (a file that is text but no dialogue);
every other ingest problem (empty, binary, undecodable, unreadable, bad diarisation) refuses the file."""


def ingest(folder: Path | str, manifest: Path | str, personalities: Collection[str] | None = None) -> Outcome:
    """Step 1 (no model): the manifest's rows of ``personalities`` (default: all) and every file they name
    as ordered turns. A row with a problem is left out and listed; a file that cannot be read is refused and
    listed, one that is no dialogue excluded; its personality goes on. A wanted personality that no good row
    names is refused."""
    folder = Path(folder)
    outcome = Outcome()
    m = read_manifest(manifest, folder)
    wanted = None if personalities is None else set(personalities)
    named = {r.personality_id for r in m.rows}
    unnamed = (m.with_problems if wanted is None else wanted) - named
    # A manifest problem names a row, not a personality: listed for a personality it concerns (or with no good row).
    outcome.problems += m.problems if wanted is None or wanted & m.with_problems else []
    outcome.warnings += [w for w in m.warnings if wanted is None or any(f": {p}: " in w for p in wanted)]
    by_pid: dict[str, list[Curated]] = defaultdict(list)
    for row in m.rows:
        if wanted is None or row.personality_id in wanted:
            by_pid[row.personality_id].append(Curated(row=row))
    for pid in sorted(unnamed):
        _refuse(outcome, pid, "no good row of the manifest names this personality"
                if pid in m.with_problems else "no row of the manifest names this personality")
    for items in by_pid.values():
        for c in items:
            c.transcript, file_problems = ingest_file(folder, c.row.file)
            if not file_problems:
                continue
            first = file_problems[0]
            kind = READ_ERRORS_EXCLUDE.get(first.rule)
            if kind is None:
                outcome.problems += file_problems
                kind = "refused"
            c.excluded = (kind, f"{first.rule}: {first.message}")
    outcome.transcripts = dict(by_pid)
    return outcome


def _usable(c: Curated) -> bool:
    return c.transcript is not None and c.excluded is None


def accepted_files(corpus: Path | str | None) -> frozenset[str]:
    """The transcripts a reviewer accepted under ``corpus`` (attribution reads them: see ``attribution``)."""
    decisions = review.read_decisions(corpus)[0] if corpus is not None else {}
    return frozenset(f for f, (d, _r) in decisions.items() if d == "accept")


def attribution_calls(outcome: Outcome, model: ModelConfig, accepted: Collection[str] = ()) -> list[PlannedCall]:
    """Step 2's calls (speaker attribution): one per transcript with labels the rule cannot place."""
    return [p for pid, items in live(outcome).items() for c in items if c.transcript is not None
            for p in attribution.plan(pid, c.transcript, c.row, model, c.row.file in accepted)]


def attribute(outcome: Outcome, results: Mapping[Hashable, Any], model: ModelConfig, accepted: Collection[str] = ()) -> None:
    """Step 2: every turn's role (rule + answers); a transcript with a failed call or in which the person never
    speaks is excluded with that reason (its personality goes on)."""
    for pid, items in live(outcome).items():
        for c in items:
            if c.transcript is None:
                continue
            c.attributions, why = attribution.assemble(pid, c.transcript, c.row, model, results, c.row.file in accepted)
            c.roles = attribution.roles_of(c.transcript, c.attributions)
            if why is not None and c.excluded is None:
                c.excluded = ("failed" if why.rule == "attribution-failed" else why.rule, why.message)
    _refuse_short(outcome, lambda c: c.excluded is None or (c.excluded[0] != "refused" and c.row.file in accepted))


def _refuse_short(outcome: Outcome, possible: Callable[[Curated], bool]) -> None:
    """Refuse, before any more calls, each personality whose transcripts that may still give pairs are under the
    split's minimum; the message counts its transcripts excluded per reason."""
    for pid, items in live(outcome).items():
        left = sum(possible(c) for c in items)
        if left < corpus.MIN_INTERVIEWS:
            _refuse_below_minimum(outcome, pid, items, left)


def _exclusion(c: Curated) -> str:
    """Why a transcript is out, in a word: its verdict's kind, or the step's exclusion (a refused file's rule)."""
    kind = c.kind or (c.excluded[0] if c.excluded else "")
    return f"refused ({c.excluded[1].split(':')[0]})" if kind == "refused" and c.excluded else kind


def _refuse_below_minimum(outcome: Outcome, pid: str, items: list[Curated], left: int) -> None:
    excluded = Counter(_exclusion(c) for c in items if not c.keep)
    why = "; excluded: " + ", ".join(f"{n} {k}" for k, n in sorted(excluded.items()) if k) if excluded else ""
    _refuse(outcome, pid, f"{left} interview(s) with QA pairs possible (of {len(items)} transcripts{why}); "
                          f"the chronological split needs {corpus.MIN_INTERVIEWS}")


def quality_calls(outcome: Outcome, model: ModelConfig) -> list[PlannedCall]:
    """Step 3's calls (quality control): one per transcript still in; it reads the roles of step 2."""
    return [quality.plan(pid, c.row.person_name, c.transcript, c.roles, model)
            for pid, items in live(outcome).items() for c in items if _usable(c)]


def judge_quality(outcome: Outcome, results: Mapping[Hashable, Any], corpus: Path | str | None) -> None:
    """Step 3: each transcript's verdict (an exclusion of an earlier step stands as its verdict), then the
    reviewer's decision recorded under ``corpus`` (it wins, except over a file that cannot be read)."""
    decisions, review_problems = review.read_decisions(corpus) if corpus is not None else ({}, [])
    outcome.warnings += [str(p) for p in review_problems]
    for pid, items in live(outcome).items():
        for c in items:
            c.quality = (False, *c.excluded) if c.excluded else quality.verdict(pid, c.transcript, results)
            if c.excluded is None or c.excluded[0] != "refused":
                c.review = decisions.get(c.row.file)  # human verification wins over the automated verdict
            c.keep, c.kind, c.reason = review.apply(c.quality, c.review)


def _pairable(c: Curated) -> bool:
    """Kept, and with turns to pair (a reviewer may keep a transcript that has none)."""
    return c.keep and c.transcript is not None and bool(c.roles)


def structuring_calls(outcome: Outcome, model: ModelConfig) -> list[PlannedCall]:
    """Step 4's calls (QA structuring): one per kept transcript (the offline model answers with the rule)."""
    return [structuring.plan(pid, c.row.person_name, c.transcript, c.roles, model)
            for pid, items in live(outcome).items() for c in items if _pairable(c)]


def structure(outcome: Outcome, results: Mapping[Hashable, Any]) -> None:
    """Step 4: the QA pairs of every kept transcript, with their raw spans; a failed call is a warning."""
    for pid, items in live(outcome).items():
        for c in items:
            if _pairable(c):
                c.pairs, failure = structuring.assemble(pid, c.transcript, results)
                if failure:
                    outcome.warnings.append(failure)
    _refuse_short(outcome, lambda c: bool(c.keep and c.pairs))


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
            _refuse_below_minimum(outcome, pid, items, len(ordered))
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
             "format": c.transcript.format if c.transcript else None,
             "removed": c.transcript.removed if c.transcript else {},
             "kept": c.keep, "kind": c.kind, "reason": c.reason, "pairs": len(c.pairs),
             "speakers": {k: a.model_dump() for k, a in c.attributions.items()},
             "turns": [{"label": t.label, "line": t.line, "text": t.text} for t in (c.transcript.turns if c.transcript else ())],
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
        "personalities": outcome.personalities(),
        "labels": outcome.labels(),
        "transcripts": outcome.table(),
    }
