"""Speaker attribution: each turn's label -> person / interviewer / other; a rule first, the model for the rest.

The rule (``rule_role``) reads a label's parts (``labels.parts``: the name, an office or honorific before it, a
role or outlet after a comma or in brackets), with dots and case ignored:

- **person**: the manifest's ``person_name`` (also without middle initials), its surname, its given name, one of its
  ``aliases``, one of the row's ``addressed_as`` (how labels address the person in that transcript, alone or
  with "the": "The President"), or any of these after an office or honorific (``Senator Moreno``,
  ``PRESIDENT CARTER``, ``Mr. Eisenhower``). A label within two letters of one of these (OCR:
  ``THE PRESIDNT``) counts too. ``addressed_as`` comes from the manifest row, which is dated: "THE PRESIDENT."
  is the person only because that row says so, never because of what the word means.
- **interviewer**: ``Q``, ``Question``, ``Reporter``, ``Interviewer``, ``Host``, ``Moderator``, ``Anchor``,
  ``Audience member``...; a label carrying an outlet as publishers print journalists (``HELEN THOMAS [UPI].``,
  ``Frank Cormier, Associated Press:``) or a role after a comma (``STEVE INSKEEP, HOST:``), unless that role
  is an office (``, Secretary of State``: someone answering, left to the model).
- **other**: text before the first label of a labelled plain-text transcript (editorial matter).
- **the answerer** (offline builder only, when none of the above names the person): the one label that names
  nobody (``THE PRESIDENT``, ``A``, ``GUEST``, ``Speaker 2``: ``labels.names_nobody``) and answers most of the
  interviewer's questions, if it clearly dominates (``answerer``). A label holding another name is someone
  else, never the answerer. Marked ``decided_by="answerer"`` so the explorer shows it for review.

Everything else (``SECRETARY MCNAMARA``, ``SPEAKER_00``, unlabelled captions) goes to the model
(``contracts/speaker_attribution``), one call per transcript that has such items. A transcript in which no
turn is the person's is excluded with that reason (``person-never-speaks``); its personality goes on. A
reviewer who accepts such a transcript says the person is there: the answerer then decides without the
dominance test (``decided_by="review"``).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Hashable, Mapping
from functools import lru_cache

from ..contracts import speaker_attribution as contract
from ..errors import Problem
from ..llm.types import ModelConfig
from ..pipeline.calls import PlannedCall, contract_request, result_for
from .labels import LabelParts, fold, names_nobody, parts
from .models import failure_of, Attribution, ManifestRow, Role, Transcript
from .structuring import asks

INTERVIEWER_LABELS = frozenset({"q", "question", "reporter", "reporters", "interviewer", "audience member", "audience",
                                "the press", "press", "host", "co-host", "cohost", "moderator", "anchor", "correspondent",
                                "presenter", "questioner", "caller", "panelist", "panellist"})
_OFFICE_ROLE = re.compile(r"\b(?:secretary|senator|governor|president|minister|general|ambassador|mayor|chairman|"
                          r"chairwoman|director|representative|congress\w*|spokes\w+|press secretary|adviser|advisor)\b")
_FUZZ = 0.86
DOMINANCE = 1.5
"""The answerer answers more of the interviewer's questions than any other label (named or not), at least
1.5 times as many as the next, and at least 2."""


def person_names(row: ManifestRow) -> frozenset[str]:
    """Every normalised spelling that names the person in this row's transcript."""
    full = fold(row.person_name)
    words = full.split()
    given = words[0] if len(words) > 1 and len(words[0]) > 1 else ""  # "Barack:", as podcasts label their guests
    names = {full, given, words[-1] if words else "", " ".join(w for w in words if len(w) > 1)}
    names |= {fold(a) for a in row.aliases}
    for addressed in row.addressed_as:
        t = fold(addressed)
        t = t[4:] if t.startswith("the ") else t
        names |= {t, f"the {t}"}
    return frozenset(n for n in names if n)


def is_offline(model: ModelConfig) -> bool:
    """The deterministic offline builder, which knows nobody: the answerer rule speaks for it."""
    return model.model.startswith("offline/")


def unit_key(turn_label: str, turn_index: int) -> str:
    """What one attribution decides for: the label, or ``#<turn>`` for an unlabelled caption/segment."""
    return turn_label if turn_label else f"#{turn_index}"


def _names_person(p: LabelParts, names: frozenset[str]) -> str | None:
    if p.full in names or (p.name and p.name in names):
        return "the person's name, alias or how the manifest says labels address the person"
    if any(difflib.SequenceMatcher(None, v, x).ratio() >= _FUZZ for v in {p.full, p.name} if v for x in names if len(x) >= 6):
        return "within two letters of the person's name or address (transcription slip)"
    return None


@lru_cache(maxsize=4096)
def rule_role(label: str, names: frozenset[str], fmt: str) -> tuple[Role, str] | None:
    """The rule's role for one label and which rule placed it, or None when the rule cannot tell.

    Remembered: a personality's labels recur in each of its transcripts, and the rule runs when a transcript's
    calls are planned and again when they are assembled; the fuzzy match (``difflib``) against every spelling of
    the name was most of the attribution's CPU in the curation's plan."""
    if not label:
        return ("other", "text before the first speaker label") if fmt == "text" else None
    p = parts(label)
    why = _names_person(p, names)
    if why:
        return "person", why
    if p.full in INTERVIEWER_LABELS:
        return "interviewer", "a questioner's label"
    if p.bracketed or (p.affiliation and not _OFFICE_ROLE.search(p.affiliation)):
        return "interviewer", "a name with its outlet or role, as journalists are printed"
    return None


def _slip_of(label: str, of: str) -> bool:
    a, b = fold(re.sub(r"[^\w ]", " ", label)), fold(re.sub(r"[^\w ]", " ", of))
    return len(b) >= 6 and difflib.SequenceMatcher(None, a, b).ratio() >= _FUZZ


def answerer(t: Transcript, placed: Mapping[str, Attribution], candidates: set[str],
             strict: bool = True) -> tuple[str, str] | None:
    """The label among ``candidates`` (unplaced labels naming nobody) that answers the interviewer's questions,
    and why; None when none clearly dominates (``strict``) or none answers at all."""
    answered: Counter[str] = Counter()
    asked = 0
    for turn, nxt in zip(t.turns, t.turns[1:]):
        a = placed.get(turn.label)
        if a is None or a.role != "interviewer" or not asks(turn.text):
            continue
        asked += 1
        b = placed.get(nxt.label)
        if nxt.label and (b is None or b.role != "interviewer"):
            answered[nxt.label] += 1
    ranked = [(n, k) for k, n in answered.most_common() if k in candidates]
    if not ranked:
        return None
    n, key = ranked[0]
    rival = max((m for k, m in answered.items() if k != key), default=0)
    if strict and (n < 2 or n < DOMINANCE * rival):
        return None
    return key, f"answers {n} of the interviewer's {asked} questions (the next label answers {rival})"


def rule_pass(t: Transcript, row: ManifestRow, model: ModelConfig, accepted: bool = False
              ) -> tuple[dict[str, Attribution], list[contract.Item]]:
    """What the rule places, and the items left for the model (with their statistics and samples).

    ``accepted``: a reviewer accepted this transcript, so the answerer decides without the dominance test
    when nothing else names the person."""
    names = person_names(row)
    placed: dict[str, Attribution] = {}
    groups: dict[str, list[str]] = {}
    for turn in t.turns:
        key = unit_key(turn.label, turn.index)
        if key in placed or key in groups:
            groups.get(key, []).append(turn.text)
            continue
        decided = rule_role(turn.label, names, t.format)
        if decided is None:
            groups[key] = [turn.text]
        else:
            placed[key] = Attribution(label=key, role=decided[0], decided_by="rule", reason=decided[1])
    if (is_offline(model) or accepted) and not any(a.role == "person" for a in placed.values()):
        unnamed = {k for k in groups if not k.startswith("#") and names_nobody(parts(k))}
        found = answerer(t, placed, unnamed, strict=not accepted)
        if found is not None:
            key, why = found
            by = "review" if accepted and not is_offline(model) else "answerer"
            placed[key] = Attribution(label=key, role="person", decided_by=by, reason=why)
            del groups[key]
            for other in [k for k in groups if not k.startswith("#") and _slip_of(k, key)]:
                placed[other] = Attribution(label=other, role="person", decided_by=by,
                                            reason=f"within two letters of {key!r} (transcription slip)")
                del groups[other]
    items = [contract.Item(label=k, turns=len(v), words=sum(len(x.split()) for x in v),
                           asks=sum("?" in x for x in v), samples=tuple(v[: contract.SAMPLE_TURNS]))
             for k, v in groups.items()]
    return placed, items


def plan(pid: str, t: Transcript, row: ManifestRow, model: ModelConfig, accepted: bool = False) -> list[PlannedCall]:
    """One call for the transcript's unplaced items; none when the rule placed every label."""
    placed, items = rule_pass(t, row, model, accepted)
    if not items:
        return []
    known = {k: a.role for k, a in placed.items() if not k.startswith("#")}
    messages = contract.build_messages(row.person_name, row.addressed_as, row.aliases, row.date, known, items)
    request = contract_request(contract, messages, item_id=f"{pid}/{t.file}",
                               parser=lambda raw, n=len(items): contract.parse(raw, n))
    return [PlannedCall(("speaker_turns", pid, t.file), model, request, {"file": t.file})]


def assemble(pid: str, t: Transcript, row: ManifestRow, model: ModelConfig, results: Mapping[Hashable, object],
             accepted: bool = False) -> tuple[dict[str, Attribution], Problem | None]:
    """Every label's attribution (rule + model), and why the transcript is excluded, if it is: a failed model
    call (its items ``failed``) or no turn of the person's."""
    placed, items = rule_pass(t, row, model, accepted)
    if items:
        res = result_for(results, ("speaker_turns", pid, t.file))  # type: ignore[arg-type]
        if res.status == "ok":
            for it, sp in zip(items, res.value.speakers, strict=True):
                placed[it.label] = Attribution(label=it.label, role=sp.role, decided_by="model", reason=sp.reason)
        else:
            why = failure_of(res)
            for it in items:
                placed[it.label] = Attribution(label=it.label, role="other", decided_by="failed",
                                               reason=f"attribution call failed: {why}")
            return placed, Problem(t.file, "$", "attribution-failed", f"speaker attribution call failed: {why}")
    if not any(a.role == "person" for a in placed.values()):
        turns = Counter(unit_key(x.label, x.index) for x in t.turns)
        return placed, Problem(t.file, "$", "person-never-speaks",
                               f"no turn is {row.person_name!r} (labels by turns: "
                               f"{', '.join(f'{k!r} {n}' for k, n in turns.most_common(6))})")
    return placed, None


def roles_of(t: Transcript, placed: Mapping[str, Attribution]) -> list[Role]:
    """The role of every turn, in order."""
    return [placed[unit_key(turn.label, turn.index)].role for turn in t.turns]
