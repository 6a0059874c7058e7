"""Compare a curated corpus with a reference corpus: pairs found, matched, missed and extra, with reasons.

The reference (``../shared/data/press_conferences_1960_1980/``) was made from the same transcripts by
a simpler rule; it is something to explain differences against, not ground truth. Pairs are compared
per personality and per interview date (the date is in every reference ``interview_id``): a curated
pair matches a reference pair of the same date when their questions are equal after case,
punctuation and spacing are ignored, or share at least ``MATCH_JACCARD`` of their words (a
footnote mark or a stage direction removed on one side only). Each missed or extra pair gets the
most specific reason available (interview excluded by quality control, interview absent from the
other side, or no question of that date matching).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

MATCH_JACCARD = 0.8
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")


class PersonComparison(BaseModel):
    model_config = ConfigDict(frozen=True)
    personality_id: str
    reference: int
    found: int
    matched: int
    missed: int
    extra: int
    same_response: int
    """Matched pairs whose responses are also equal after normalisation."""
    reasons: dict[str, int]


def _key(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.casefold()))


def _words(text: str) -> set[str]:
    return set(_key(text).split())


def _by_date(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for iv in doc["interviews"]:
        m = _DATE.search(iv["interview_id"])
        out.setdefault(m.group(1) if m else iv["interview_id"], []).extend(iv["qa_pairs"])
    return out


def _match(ours: list[dict[str, Any]], ref: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Greedy one-to-one matches (our index, reference index): exact question keys first, then word overlap."""
    pairs: list[tuple[int, int]] = []
    free = set(range(len(ref)))
    keys = {}
    for j, r in enumerate(ref):
        keys.setdefault(_key(r["question"]), []).append(j)
    left = []
    for i, o in enumerate(ours):
        js = [j for j in keys.get(_key(o["question"]), []) if j in free]
        if js:
            pairs.append((i, js[0]))
            free.discard(js[0])
        else:
            left.append(i)
    ref_words = {j: _words(ref[j]["question"]) for j in free}
    for i in left:
        w = _words(ours[i]["question"])
        best, score = None, 0.0
        for j in free:
            u = len(w | ref_words[j])
            s = len(w & ref_words[j]) / u if u else 0.0
            if s > score:
                best, score = j, s
        if best is not None and score >= MATCH_JACCARD:
            pairs.append((i, best))
            free.discard(best)
    return pairs


def compare_person(pid: str, ours: dict[str, Any] | None, ref: dict[str, Any],
                   excluded: dict[str, str] | None = None) -> PersonComparison:
    """One personality's comparison. ``excluded``: date -> why our curation dropped that interview."""
    excluded = excluded or {}
    ours_d = _by_date(ours) if ours else {}
    ref_d = _by_date(ref)
    reasons: Counter[str] = Counter()
    matched = same = 0
    for date in sorted(set(ours_d) | set(ref_d)):
        o, r = ours_d.get(date, []), ref_d.get(date, [])
        if not r:
            reasons["extra: interview absent from the reference (it drops interviews under 3 pairs)"] += len(o)
            continue
        if not o:
            why = excluded.get(date, "no pair kept by the curation")
            reasons[f"missed: interview not in the curated corpus ({why})"] += len(r)
            continue
        m = _match(o, r)
        matched += len(m)
        same += sum(_key(o[i]["response"]) == _key(r[j]["response"]) for i, j in m)
        mo, mr = {i for i, _ in m}, {j for _, j in m}
        ours_q = {_key(p["question"]) for p in o}
        for j, p in enumerate(r):
            if j not in mr:
                reasons["missed: no curated question of that date matches it" if _key(p["question"]) not in ours_q
                        else "missed: question kept, paired differently"] += 1
        for i, p in enumerate(o):
            if i not in mo:
                words = len(p["response"].split())
                reasons["extra: no reference question of that date matches it" if words >= 3 else "extra: short pair"] += 1
    found = sum(len(v) for v in ours_d.values())
    total = sum(len(v) for v in ref_d.values())
    return PersonComparison(personality_id=pid, reference=total, found=found, matched=matched,
                            missed=total - matched, extra=found - matched, same_response=same,
                            reasons=dict(reasons.most_common()))


def compare_corpora(ours: dict[str, dict[str, Any]], reference_dir: Path | str,
                    excluded: dict[str, dict[str, str]] | None = None) -> list[PersonComparison]:
    """Every reference personality against the curated documents (``personality_id`` -> document)."""
    out = []
    for doc_path in sorted(Path(reference_dir).glob("*/prepared_input.json")):
        ref = json.loads(doc_path.read_text(encoding="utf-8"))
        pid = ref["personality_id"]
        out.append(compare_person(pid, ours.get(pid), ref, (excluded or {}).get(pid)))
    return out


def format_table(rows: list[PersonComparison], top: int = 3) -> str:
    """The comparison as a Markdown table, then the largest reasons per person."""
    lines = ["| personality | reference | found | matched | missed | extra | same response |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.personality_id} | {r.reference} | {r.found} | {r.matched} | {r.missed} | {r.extra} | {r.same_response} |")
    t = [sum(getattr(r, f) for r in rows) for f in ("reference", "found", "matched", "missed", "extra", "same_response")]
    lines.append("| **total** | " + " | ".join(str(x) for x in t) + " |")
    lines.append("")
    for r in rows:
        lines.append(f"{r.personality_id}: " + ("; ".join(f"{n} {why}" for why, n in list(r.reasons.items())[:top])
                                                 or "no difference"))
    return "\n".join(lines)


def shared_manifest_rows(raw_dir: Path | str) -> list[dict[str, str]]:
    """The manifest a user writes for ``raw_transcripts_1960_1980`` from its own ``manifest.json``: each file's
    ``person`` as ``person_name``, its date and its document title (``title``: "News conference"), and the
    reference corpus's ``personality_id`` (``NEWSCONF_<SURNAME>``); no ``addressed_as``, so ``THE PRESIDENT.``
    is found offline by the answerer rule (``attribution``)."""
    data = json.loads((Path(raw_dir) / "manifest.json").read_text(encoding="utf-8"))
    return [{"file": t["file"], "personality_id": "NEWSCONF_" + t["person"].split()[-1].upper(),
             "person_name": t["person"], "date": t["date"], "title": t["title"]} for t in data["transcripts"]]
