"""Speaker labels as publishers print them: one rule that finds a label at a paragraph's start, and the
parts of a label that attribution reads (the name, an office or honorific before it, a role or outlet after it).

The rule (``speaker_label``): a paragraph opens with a label when it starts with

    [timestamp] [**] HEAD [AFFILIATION] [timestamp] [**] TERMINATOR (space or the line's end)

- HEAD: one to eight words, each ALL CAPS or Title Case (``THE PRESIDENT``, ``Mr. Smith``, ``Senator
  Ada Moreno``, ``SECRETARY OF STATE RUSK``, ``Marvin L. Arrowsmith``), name particles (``de``, ``van``,
  ``of``, ``the``...) allowed inside; a diarisation id (``Speaker 1``, ``SPEAKER_00``) too;
- AFFILIATION: up to three of a role or outlet after a comma (``, host``, ``, Associated Press``) or in
  brackets or parentheses (``[UPI]``, ``(D-Ohio)``): ``GOV. ADA MORENO (D), OHIO``;
- TERMINATOR: ``.``, ``..`` (a print slip), ``:`` or ``::``.

Two strengths, because a capitalised word and a full stop also open ordinary sentences ("Well. I ..."):
a label ending in a colon, written in capitals, carrying an affiliation or being a question-and-answer
marker (``Q``, ``A``, ``Question``, ``Answer``) is **strong** and always taken; a Title Case label ending
in a full stop is **weak** and taken only when the same label opens at least two paragraphs of the
transcript (every speaker of an interview speaks more than once). Words that open sentences or metadata
lines with a colon (``Note:``, ``Yes.``, ``Date:``) are never labels. A paragraph holding only a label
(``Speaker 1 (00:00:05):`` then the text on the next line, as podcast and broadcast services print it)
starts a turn that the next paragraphs fill.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_TIME = r"[\[(]?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?[\])]?"
_LEAD = re.compile(rf"^(?:{_TIME}\s+|>>\s*|-\s+(?=[A-Z]))")
"""A timestamp, a caption's speaker-change mark (``>>``) or a dash before the label."""
_PARTICLES = r"(?:de|del|della|der|den|di|da|du|van|von|la|le|bin|ibn|al|el|of|the|and|for|on)"
_WORD = r"(?:[A-Z][\w'\u2019\-]*\.??|Mc[A-Z][\w'\u2019\-]*|O'[A-Z][\w'\u2019\-]*)"
_HEAD = rf"{_WORD}(?:[ \t]+(?:{_WORD}|{_PARTICLES}\b|\d{{1,3}}\b))*?"
_ROLE = (r"(?:host|co-host|cohost|moderator|anchor|correspondent|reporter|interviewer|editor|columnist|journalist|"
         r"presenter|producer|guest|panelist|panellist|author|writer|contributor|analyst|commentator|former|chief|"
         r"senior|political|white|house|news|staff|national|foreign|of|the|and|for|at|&)")
_AFFIL_WORD = rf"(?:[A-Z][\w'\u2019.&\-]*|{_ROLE}\b)"
_AFFIL = (rf"(?:(?:,[ \t]+{_AFFIL_WORD}(?:[ \t]+{_AFFIL_WORD}){{0,7}}"
          r"|[ \t]*\[[^\]\n]{1,80}\]|[ \t]*\([^)\n]{1,60}\))){1,3}")
_NOT_AT = "".join(rf"(?<!\b{a})" for a in ("Mr", "MR", "Ms", "MS", "Dr", "DR", "St", "ST", "Jr", "JR", "Sr", "SR", "Mrs", "MRS",
                                            "Sen", "SEN", "Rep", "REP", "Gov", "GOV", "Gen", "GEN", "Sec", "SEC", "Col",
                                            "COL", "Adm", "ADM", "Lt", "LT", "Hon", "HON", "Rev", "REV", "Prof", "PROF"))
_TERM = rf"(?P<term>{_NOT_AT}(?<!\s[A-Z])\.{{1,2}}|:{{1,2}})"
"""The terminator; a full stop after an honorific's abbreviation (``Mr.``) or an initial (``L.``) ends no label."""
_LABEL = re.compile(
    rf"^(?:\*\*|__)?(?P<label>(?P<head>{_HEAD})(?P<affil>{_AFFIL})?)(?:[ \t]*{_TIME})?(?:\*\*|__)?"
    rf"{_TERM}(?:\*\*|__)?(?:\s+|$)(?P<text>.*)$", re.DOTALL)
_STAMP_BEFORE_COLON = re.compile(r"[ \t]*[\[(]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?[\])](?=[ \t]*:)")
"""A timestamp printed between a label and its colon (``Speaker 1 (00:00:05):``)."""
_BARE = re.compile(r"^(?P<label>Q|THE PRESIDENT)\s+(?P<text>[A-Z][a-z].*)$", re.DOTALL)
"""A usual label whose full stop was lost in print ("Q Mr. President, ...", "THE PRESIDENT Well, ...")."""
_QA = re.compile(r"^(?:Q|A|QUESTION|ANSWER)$", re.IGNORECASE)
_ID = re.compile(r"^speaker[ _]?\d{1,3}$", re.IGNORECASE)
_NOT_LABELS = frozenset({
    *"i ii iii iv v vi vii viii ix x one two three four five six first second third fourth fifth note nb ps ok okay no yes "
     "well right sure so now look listen thanks exactly absolutely correct true good great indeed oh date time place "
     "location source subject transcript update correction copyright release embargo re title summary background "
     "end fin".split(),
    "thank you", "editor's note", "editors note", "for immediate release", "the end"})
"""Words that open a sentence, a list item or a metadata line with a colon or a full stop, not a speaker."""
LABEL_WORDS_MAX = 8


class Found(NamedTuple):
    """A label at a paragraph's start: the label as printed (spaces collapsed, no terminator), the text after it,
    and whether it is strong (always a label) or weak (a label only when it recurs)."""

    label: str
    text: str
    strong: bool


def speaker_label(paragraph: str) -> Found | None:
    """The label opening ``paragraph`` under the rule above, or None."""
    para = _STAMP_BEFORE_COLON.sub("", _LEAD.sub("", paragraph, count=1), count=1)
    if para.startswith("THE. PRESIDENT"):  # a print slip of the presidential papers
        para = "THE PRESIDENT" + para[len("THE. PRESIDENT"):]
    m = _LABEL.match(para) or _BARE.match(para)
    if m is None:
        return None
    label = " ".join(m.group("label").split()).rstrip(".").rstrip()
    bare = m.re is _BARE
    head = label if bare else " ".join(m.group("head").split()).rstrip(".")
    words = head.replace(".", " ").split()
    if (not words or len(label.split()) > LABEL_WORDS_MAX or head.casefold() in _NOT_LABELS
            or label.casefold() in _NOT_LABELS):
        return None
    strong = bare or (m.group("term").startswith(":") or bool(m.group("affil")) or bool(_QA.match(head))
                      or bool(_ID.match(head))
                      or all(w.isupper() or not w.isalpha() or w.casefold() in ("the", "of", "and") for w in words))
    return Found(label, m.group("text"), strong)


OFFICES = frozenset(
    "president vice prime minister secretary senator sen governor gov representative rep congressman congresswoman "
    "general gen admiral adm ambassador mayor chancellor chairman chairwoman chair speaker justice judge attorney "
    "director commissioner premier king queen prince princess pope cardinal bishop reverend rev father sister "
    "dr doctor professor prof mr mrs ms miss sir dame lord lady madam mister captain colonel major lieutenant "
    "sergeant officer chief leader deputy minority majority state defense defence treasury foreign interior "
    "labor labour commerce united states of the u s us house president-elect vice-president ex-president former "
    "acting".split())
"""Offices, honorifics and the words of offices' names (``Secretary of State``, ``Vice President``): a label
made only of these names nobody in particular (``THE PRESIDENT``); before a name they say how the person is
addressed (``Senator Moreno``)."""

ROLE_WORDS = frozenset(
    "a answer guest interviewee respondent subject witness candidate nominee panelist speaker unidentified "
    "male female man woman voice".split())
"""Words of an unnamed answering role (``A.``, ``GUEST:``) beside the offices."""


class LabelParts(NamedTuple):
    """A label split for attribution, each part casefolded with dots and extra spaces removed."""

    full: str
    """The head (no affiliation), e.g. ``senator ada moreno``."""
    name: str
    """The head without a leading run of office or honorific words, e.g. ``ada moreno`` ("" when none is left)."""
    affiliation: str
    """What followed a comma or stood in brackets (``associated press``, ``host``); "" when nothing did."""
    bracketed: bool
    """The affiliation was in brackets or parentheses, as publishers print a journalist's outlet (``[UPI]``,
    ``(Associated Press)``); a party and state in parentheses (``(D-Ohio)``, ``(R)``) is no outlet."""


_PARTY = re.compile(r"^(?:[DRI](?:-[A-Z][\w. ]*)?|Dem\w*|Rep\w*|Ind\w*)$")


def fold(text: str) -> str:
    """Casefolded, dots and underscores as spaces, spaces collapsed: how a label and a name are compared."""
    return " ".join(text.casefold().replace(".", " ").replace("_", " ").split())


def parts(label: str) -> LabelParts:
    """Split a label (as ``speaker_label`` returns it) into the parts attribution reads."""
    bracket = re.search(r"\[([^\]]*)\]", label)
    paren = re.search(r"\(([^)]*)\)", label)
    outlet = paren is not None and not _PARTY.match(paren.group(1).strip())
    rest = re.sub(r"\(([^)]*)\)", " ", re.sub(r"\[[^\]]*\]", " ", label))
    head, _, after = rest.partition(",")
    affiliation = fold(bracket.group(1)) if bracket else fold(paren.group(1)) if outlet else fold(after)
    full = fold(head)
    words = full.split()
    k = 0
    while k < len(words) and words[k] in OFFICES:
        k += 1
    return LabelParts(full, " ".join(words[k:]), affiliation, bracket is not None or outlet)


def names_nobody(p: LabelParts) -> bool:
    """True for a label that is only an office, an honorific or an answering role (``THE PRESIDENT``, ``A``,
    ``Speaker 2``): it could be the person, where a label holding a name other than the person's is someone else."""
    return all(w in OFFICES or w in ROLE_WORDS or w.isdigit() for w in p.full.split())
