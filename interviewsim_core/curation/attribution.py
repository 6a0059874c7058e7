"""Speaker attribution: each turn's label -> person / interviewer / other; a rule first, the model for the rest.

The rule (``rule_role``), on a label with dots, case and an honorific (Mr., Dr., ...) ignored:

- **person**: the manifest's ``person_name``, its surname, one of its ``aliases``, or the row's
  ``title`` (optionally with "the" or followed by the surname). The title is taken from the manifest
  row, which is dated: "THE PRESIDENT." is the person only because that row says the person held
  that title in that transcript, never because of what the word means. A label within two letters
  of one of these (OCR: ``THE PRESIDNT``) counts too.
- **interviewer**: ``Q``, ``Question``, ``Reporter``, ``Interviewer``, ``Audience member``, or a label
  carrying an affiliation as publishers print journalists (``HELEN THOMAS [UPI].``,
  ``Frank Cormier, Associated Press:``).
- **other**: text before the first label of a labelled plain-text transcript (editorial matter).

Everything else (``SECRETARY MCNAMARA``, ``SPEAKER_00``, unlabelled captions) goes to the model
(``contracts/speaker_attribution``), one call per transcript that has such items.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Hashable, Mapping
from functools import lru_cache

from ..contracts import speaker_attribution as contract
from ..errors import Problem
from ..llm.types import ModelConfig
from ..pipeline.calls import PlannedCall, contract_request, result_for
from .models import failure_of, Attribution, ManifestRow, Role, Transcript

INTERVIEWER_LABELS = frozenset({"q", "question", "reporter", "interviewer", "audience member", "the press"})
_HONORIFIC = re.compile(r"^(?:mr|mrs|ms|miss|dr|sir|madam)\s+")
_FUZZ = 0.86


def _norm(label: str) -> str:
    s = re.sub(r"\[[^\]]*\]", " ", label).casefold().replace(".", " ")
    s = " ".join(s.split())
    return _HONORIFIC.sub("", s)


def person_names(row: ManifestRow) -> frozenset[str]:
    """Every normalised spelling that names the person in this row's transcript."""
    names = {_norm(row.person_name), _norm(row.person_name).split()[-1] if row.person_name.split() else ""}
    names |= {_norm(a) for a in row.aliases}
    if row.title:
        t = _norm(row.title)
        t = t[4:] if t.startswith("the ") else t
        surname = _norm(row.person_name).split()[-1]
        names |= {t, f"the {t}", f"{t} {surname}"}
    return frozenset(n for n in names if n)


def unit_key(turn_label: str, turn_index: int) -> str:
    """What one attribution decides for: the label, or ``#<turn>`` for an unlabelled caption/segment."""
    return turn_label if turn_label else f"#{turn_index}"


@lru_cache(maxsize=4096)
def rule_role(label: str, names: frozenset[str], fmt: str) -> tuple[Role, str] | None:
    """The rule's role for one label and which rule placed it, or None when the rule cannot tell.

    Remembered: a personality's labels recur in each of its transcripts, and the rule runs when a transcript's
    calls are planned and again when they are assembled; the fuzzy match (``difflib``) against every spelling of
    the name was most of the attribution's CPU in the curation's plan."""
    if not label:
        return ("other", "text before the first speaker label") if fmt == "text" else None
    n = _norm(label)
    if n in names:
        return "person", "the person's name, alias or title on this date"
    if any(difflib.SequenceMatcher(None, n, x).ratio() >= _FUZZ for x in names if len(x) >= 6):
        return "person", "within two letters of the person's name or title (transcription slip)"
    if n in INTERVIEWER_LABELS:
        return "interviewer", "a questioner's label"
    if ("[" in label and "]" in label) or ", " in label:
        return "interviewer", "a name with its affiliation, as journalists are printed"
    return None


def rule_pass(t: Transcript, row: ManifestRow) -> tuple[dict[str, Attribution], list[contract.Item]]:
    """What the rule places, and the items left for the model (with their statistics and samples)."""
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
    items = [contract.Item(label=k, turns=len(v), words=sum(len(x.split()) for x in v),
                           asks=sum("?" in x for x in v), samples=tuple(v[: contract.SAMPLE_TURNS]))
             for k, v in groups.items()]
    return placed, items


def plan(pid: str, t: Transcript, row: ManifestRow, model: ModelConfig) -> list[PlannedCall]:
    """One call for the transcript's unplaced items; none when the rule placed every label."""
    placed, items = rule_pass(t, row)
    if not items:
        return []
    known = {k: a.role for k, a in placed.items() if not k.startswith("#")}
    messages = contract.build_messages(row.person_name, row.title, row.aliases, row.date, known, items)
    request = contract_request(contract, messages, item_id=f"{pid}/{t.file}",
                               parser=lambda raw, n=len(items): contract.parse(raw, n))
    return [PlannedCall(("speaker_turns", pid, t.file), model, request, {"file": t.file})]


def assemble(pid: str, t: Transcript, row: ManifestRow, results: Mapping[Hashable, object]) -> tuple[dict[str, Attribution], list[Problem]]:
    """Every label's attribution (rule + model); a failed model call leaves its items ``failed``."""
    placed, items = rule_pass(t, row)
    problems: list[Problem] = []
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
            problems.append(Problem(t.file, "$", "attribution-failed", f"speaker attribution call failed: {why}"))
    if not any(a.role == "person" for a in placed.values()):
        problems.append(Problem(t.file, "$", "person-never-speaks",
                                f"no turn is {row.person_name!r} (labels: {sorted(placed)[:8]})"))
    return placed, problems


def roles_of(t: Transcript, placed: Mapping[str, Attribution]) -> list[Role]:
    """The role of every turn, in order."""
    return [placed[unit_key(turn.label, turn.index)].role for turn in t.turns]
