"""Offline premise judge: both passes of seed 002 answered by lexical rules from the prompt alone.

Pass 1 reads only the statement (the prompt holds nothing else): the predicate is the first
force marker or verb from a short list outside quotation marks, the subject is what precedes it
(UNKNOWN when it holds a pronoun or a vague referent), the object is the rest of that clause
unless it is vacuous, the time is a year or date written in the statement, SELF_ANCHORING for enduring
attributes (born, named, grew up) and UNKNOWN otherwise, and the score follows the seed's rubric
from how many slots are UNKNOWN.

Pass 2 reads the conclusion, the pass-1 JSON, the peer and the window: content words of the
conclusion that no window message contains are FABRICATION elements, a hedge present in the
best-matching message but absent from the conclusion is a flattened force, a date in the
conclusion is ANCHORED_CORRECTLY when the window has it and ANCHOR_GUESSED otherwise, and each
gap is PRESENT_IN_WINDOW when the window holds words or a date that could fill it.

A deterministic smoke-test baseline so the premise pipeline runs with no key and no network;
its verdicts say nothing about any deriver and must never be reported as a judge's.
"""

from __future__ import annotations

import json
import re

from ..contracts import premise as contract
from ._text import content_tokens, tokens


_P1_STATEMENT = "Statement to evaluate: "
_P2_CONCLUSION = "Conclusion under evaluation: "
_P2_PASS1 = "\n\nBlind reconstruction (pass 1 output): "
_P2_PEER = "\n\nTarget peer: "
_P2_WINDOW = "\n\nFull input window the deriver saw (messages with timestamps): "
_WINDOW_LINE = re.compile(r"^\[\d+\] \[time: (?P<time>.*?)\] (?P<speaker>[^:]*): (?P<text>.*)$", re.MULTILINE)

_PRONOUNS = frozenset("he she they it him her them his their i me my we us our you your".split())
_PREDICATES = (
    "was told", "said", "says", "stated", "states", "believes", "believed", "thinks", "thought", "feels",
    "felt", "joked", "might", "may", "could", "would", "will", "plans", "planned", "wants", "wanted",
    "prefers", "preferred", "likes", "liked", "loves", "loved", "hates", "hated", "did", "does", "is", "was",
    "are", "were", "has", "had", "became", "becomes", "moved", "worked", "works", "lives", "lived",
    "won", "lost", "met", "left", "joined", "started", "decided", "supports", "supported", "opposes", "opposed",
    "responded", "replied", "answered", "agreed", "disagreed", "told", "asked", "announced", "explained",
    "described", "called", "wrote", "studied", "grew up", "spent", "remembers", "recalled", "recalls",
)
_REPORTING = frozenset({"said", "says", "stated", "states", "joked", "was told"})
HEDGES = frozenset({"might", "may", "could", "perhaps", "maybe", "probably", "possibly"})
_VACUOUS = re.compile(r"^(?:(?:something|someone|somebody|a question|a project|a thing|things|stuff)\b.*|it|that|this|so)$", re.I)
_DATE = re.compile(
    r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+)?(?:1[5-9]\d\d|20\d\d)\b", re.I
)
_ENDURING = re.compile(r"\b(?:born|birthday|named|name is|grew up|raised|native of|is from|childhood)\b", re.I)
_RELATIVE = re.compile(
    r"\b(?:yesterday|today|tomorrow|recently|now|currently|nowadays|these days|last (?:week|month|year)|"
    r"next (?:week|month|year)|ago|soon)\b", re.I
)
_STATE = re.compile(r"\b(?:is|are|has|have|works|lives|owns|holds)\b", re.I)
_GENERAL = re.compile(r"\b(?:always|usually|often|never|generally|tends?|prefers?|likes?|every|whenever)\b", re.I)
_CONDITION = re.compile(r"\b(?:when|whenever|if|during|unless)\b[^,.;]*", re.I)
_CLAUSE_LINKS = re.compile(r"\band\b|;|\bwho\b|\bwhich\b|\bbut\b|\bwhile\b|\bbecause\b", re.I)
# Words of the fixed frame atomic items are stated in, never evidence about the person.
_FRAME_WORDS = frozenset({"answer", "question", "asked", "interview", "statement"})


def answer_pass1(prompt: str) -> str:
    statement = prompt.rpartition(_P1_STATEMENT)[2]
    return json.dumps(blind_reading(statement.strip()), ensure_ascii=False)


def answer_pass2(prompt: str) -> str:
    return json.dumps(_verify(prompt), ensure_ascii=False)


# -- pass 1 ----------------------------------------------------------------------------------


_QUOTED = re.compile(r'"[^"]*"|\u201c[^\u201d]*\u201d')
_PREDICATE = re.compile(r"\b(" + "|".join(re.escape(p) for p in _PREDICATES) + r")\b", re.I)
_VAGUE_SUBJECT = re.compile(r"^(?:someone|somebody|a (?:man|woman|person|friend|colleague)|people|they)\b", re.I)


def _predicate(statement: str) -> re.Match[str] | None:
    """The first force marker or verb outside quotation marks (quoted words are content)."""
    masked = _QUOTED.sub(lambda m: "_" * len(m.group(0)), statement)
    return _PREDICATE.search(masked)


def _subject(before: str) -> tuple[str, list[str]]:
    """The subject from the words before the predicate, or UNKNOWN with the defect's label."""
    text = before.strip(" ,;:")
    if not text:
        return "UNKNOWN", ["vague-referent"]
    words = {w.strip("\"'(),.;:!?\u201c\u201d").lower() for w in text.split()}
    if words & _PRONOUNS:
        return "UNKNOWN", ["unresolved-pronoun"]
    if _VAGUE_SUBJECT.match(text):
        return "UNKNOWN", ["vague-referent"]
    return text, []


def blind_reading(statement: str) -> dict:
    """The offline pass-1 JSON object for one statement (seed key order)."""
    labels: list[str] = []
    m = _predicate(statement)
    subject, lab = _subject(statement[: m.start()] if m else "")
    labels += lab
    predicate, obj = "UNKNOWN", "UNKNOWN"
    if m:
        marker = m.group(1).lower()
        hedged = marker in HEDGES or bool(set(tokens(statement)) & HEDGES)
        force = "hedged" if hedged else ("reported speech" if marker in _REPORTING else "stated as fact")
        predicate = f"{marker} ({force})"
        rest = re.split(r"[,.;!?]\s", statement[m.end():].strip() + " ", maxsplit=1)[0].strip(" .;,!?")
        if rest and not _VACUOUS.match(rest):
            obj = rest
        else:
            labels.append("vacuous-object" if rest else "missing-object")
    else:
        labels.append("missing-predicate")
    date = _DATE.search(statement)
    if date:
        time = date.group(0)
    elif _ENDURING.search(statement):
        time = "SELF_ANCHORING"
    else:
        time = "UNKNOWN"
        labels.append("relative-time" if _RELATIVE.search(statement) else (
            "unanchored-state-claim" if _STATE.search(statement) else "missing-time-anchor"))
    scope = "N/A"
    if _GENERAL.search(statement):
        cond = _CONDITION.search(statement)
        scope = cond.group(0).strip() if cond else "UNKNOWN"
        if not cond:
            labels.append("unscoped-generalization")
    slots = {"subject": subject, "predicate_and_force": predicate, "object_or_content": obj, "time": time, "scope": scope}
    unknown = [s for s, v in slots.items() if v == "UNKNOWN"]
    core_unknown = sum(1 for s in ("subject", "predicate_and_force", "object_or_content") if s in unknown)
    if not any(ch.isalpha() for ch in statement):
        score = 0.0
    elif core_unknown >= 2:
        score = 0.2
    elif core_unknown == 1:
        score = 0.4
    elif unknown:
        score = 0.6
    else:
        score = 1.0
    inference = "NONE" if subject == "UNKNOWN" or obj == "UNKNOWN" else (
        f"{subject} can be expected to act consistently with having {predicate.split(' (')[0]} {obj}.")
    return {
        **slots,
        "unknown_slots": unknown,
        "licensed_inference": inference,
        "decontextuality_score": score,
        "labels": labels,
        "bundled": bool(_CLAUSE_LINKS.search(statement)),
        "notes": "Offline lexical reading of the statement; no model was called.",
    }


# -- pass 2 ----------------------------------------------------------------------------------


def _sections(prompt: str) -> tuple[str, dict, str, str]:
    """(conclusion, pass-1 object, peer id, window text) read back from a filled pass-2 prompt."""
    body = prompt.rpartition("\n\n" + _P2_CONCLUSION)[2]
    conclusion, _, rest = body.partition(_P2_PASS1)
    p1_text, _, rest = rest.partition(_P2_PEER)
    peer, _, window = rest.partition(_P2_WINDOW)
    try:
        p1 = json.loads(p1_text)
    except ValueError:
        p1 = {}
    return conclusion.strip(), p1 if isinstance(p1, dict) else {}, peer.strip(), window


def _stemmed(words: set[str]) -> set[str]:
    return {w[:5] for w in words}


def _verify(prompt: str) -> dict:
    conclusion, p1, peer, window_text = _sections(prompt)
    messages = [(m.group("time"), m.group("text")) for m in _WINDOW_LINE.finditer(window_text)]
    window_words = _stemmed(content_tokens(" ".join(t for _, t in messages)))
    peer_words = set(tokens(peer))
    concl_words = content_tokens(conclusion)
    missing = sorted(
        (w for w in concl_words - peer_words - _FRAME_WORDS if len(w) >= 4 and w[:5] not in window_words),
        key=lambda w: (conclusion.lower().find(w), w),
    )[:5]
    elements = [
        {"element": w, "classification": "FABRICATION", "evidence": "no message of the window contains this word"}
        for w in missing
    ]
    best_i, best = -1, ""
    for i, (_, text) in enumerate(messages):
        if best_i < 0 or len(content_tokens(text) & concl_words) > len(content_tokens(best) & concl_words):
            best_i, best = i, text
    dropped_hedge = bool(set(tokens(best)) & HEDGES) and not (set(tokens(conclusion)) & HEDGES)

    unknown = [s for s in p1.get("unknown_slots", []) if isinstance(s, str)]
    subj = str(p1.get("subject", "UNKNOWN"))
    core_unknown = sum(1 for s in ("subject", "predicate_and_force", "object_or_content") if s in unknown)
    if core_unknown >= 2:
        interpretation = "N/A"
    elif subj != "UNKNOWN" and not (_stemmed(content_tokens(subj)) <= window_words | _stemmed(peer_words)):
        interpretation = "MISMATCH"
    else:
        interpretation = "MATCH"

    date = _DATE.search(conclusion)
    window_dates = [d.group(0) for d in _DATE.finditer(" ".join(f"{t} {x}" for t, x in messages))]
    if str(p1.get("time", "")) == "SELF_ANCHORING":
        time_status = "SELF_ANCHORING"
    elif date:
        time_status = "ANCHORED_CORRECTLY" if date.group(0).lower() in window_text.lower() else "ANCHOR_GUESSED"
    elif any(t and t in conclusion for t, _ in messages):
        time_status = "HEDGED_APPROPRIATELY"
    else:
        time_status = "ANCHOR_MISSING"

    where = f"message [{best_i + 1}]" if best_i >= 0 else "the window"
    extra_in_best = content_tokens(best) - concl_words - _FRAME_WORDS
    attribution = []
    for slot in unknown:
        if not messages:
            attribution.append({"gap": slot, "attribution": "ABSENT_FROM_WINDOW", "evidence": "the window is empty"})
        elif slot == "time":
            found = bool(window_dates)
            attribution.append({
                "gap": slot,
                "attribution": "PRESENT_IN_WINDOW" if found else "ABSENT_EVERYWHERE",
                "evidence": f"the window dates a message {window_dates[0]}" if found
                else "no message of the window carries a calendar date",
            })
        elif slot == "subject" and peer:
            attribution.append({"gap": slot, "attribution": "PRESENT_IN_WINDOW", "evidence": f"target peer {peer}"})
        else:
            attribution.append({
                "gap": slot,
                "attribution": "PRESENT_IN_WINDOW" if extra_in_best else "ABSENT_EVERYWHERE",
                "evidence": f"{where} says more than the conclusion keeps" if extra_in_best
                else f"{where} adds nothing the conclusion lacks",
            })
    for e in elements:
        attribution.append({"gap": f"unsupported element {e['element']}", "attribution": "ABSENT_EVERYWHERE",
                            "evidence": "the word appears in no message"})
    if dropped_hedge:
        attribution.append({"gap": "flattened force", "attribution": "PRESENT_IN_WINDOW",
                            "evidence": f"{where} hedges; the conclusion does not"})

    labels = []
    if interpretation == "MISMATCH":
        labels.append("misread-subject")
    if elements:
        labels.append("unsupported-detail")
    if dropped_hedge:
        labels.append("dropped-hedge")
    if time_status == "ANCHOR_MISSING":
        labels.append("missing-time-anchor")
    elif time_status == "ANCHOR_GUESSED":
        labels.append("guessed-date")
    labels += [f"unresolved-{s.replace('_', '-')}" for s in unknown if s != "time"]
    return {
        "interpretation": interpretation,
        "interpretation_notes": f"Offline check of the blind reading's subject against the window and peer {peer or '(none)'}.",
        "unsupported_elements": elements,
        "force_preserved": not dropped_hedge,
        "force_notes": f"{where} hedges but the conclusion states it flatly" if dropped_hedge else "",
        "time_status": time_status,
        "failure_attribution": attribution,
        "labels": labels,
        "primary_cause": labels[0] if labels else "NONE",
    }


RESPONDS = {contract.PASS1_NAME: answer_pass1, contract.PASS2_NAME: answer_pass2}
"""The two passes this module answers, by contract name (what the dispatcher keys on)."""
