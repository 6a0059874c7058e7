"""The two-pass premise-usability judge (seed 002) as a prompt contract.

Asks whether a stored conclusion can serve as a premise for a reader who never sees its source.
Pass 1 (``premise_pass1``) reconstructs the proposition blind, from the statement alone; pass 2
(``premise_pass2``) grades that reading against the full window the deriver saw and says where
each gap lives. Two separate calls, because a pass 1 that sees the source degenerates into a
self-report (seed 002, "HARNESS WIRING"). The verdict is combined in code (``premise/verdict.py``),
never by either judge.

The templates are the seed's text verbatim, except that the typographic quotes inside the two
"Return ONLY a JSON object" examples are straight quotes so that models answer in valid JSON
(issue 2). Placeholders are filled in one pass by regular expression, never ``str.format``: the
templates contain JSON braces, and a conclusion that itself contains ``{window}`` must stay text.

Parser decisions where the seed leaves room (all part of PARSER_VERSION):

* ``decontextuality_score`` is any JSON number in [0, 1] (booleans and NaN rejected). The rubric
  names six anchors, but an intermediate value such as 0.7 is still a usable point on the
  gradient the seed wants kept, so it is accepted rather than re-asked.
* Every key of the seed's output shape is required in both passes, ``notes`` included: the seed's
  "only if something needs explaining" licenses an empty ``notes``, not a missing key.
* The commentary fields ``interpretation_notes`` and ``force_notes`` may be empty (a preserved
  force has nothing to name); the slot values, inference, labels, elements, evidence, gaps and
  ``primary_cause`` must be non-blank.
* No string anywhere in a reply may be a placeholder of the seed's output shape ("…", "… or NONE",
  "brief pointer into the window"...: ``shape_placeholders`` reads them out of the template), and no
  string may repeat a run of the template's own wording (``_guards``): both are a copied prompt,
  not a judgment (issue 22).
* ``unknown_slots`` entries must name one of the five slots (case-insensitive, stored lowercase,
  no repeats), because the verdict depends on which slot is unknown.
* A slot value reads as UNKNOWN when it is ``UNKNOWN`` or starts with ``UNKNOWN`` followed by a
  non-word character (the seed's own worked example writes "UNKNOWN — the thing assented to is
  absent"); the same rule reads ``NONE`` in ``licensed_inference``. Both markers match in any
  case: a judge that writes "Unknown - no date" or "none" means the marker, and reading it as a
  filled slot or a real inference would turn a FAIL into a PASS. Re-asking instead would spend a
  call to learn what the reply already says. A case variant must stand alone or be followed by
  punctuation, because "None of his aides would resign" is a real inference that happens to open
  with the word.
"""

from __future__ import annotations

import json
import re
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, reject_placeholder, string_leaves
from ._json import fail, load_object, require_choice, require_keys, require_text

PASS1_NAME = "premise_pass1"
PASS2_NAME = "premise_pass2"
CONTRACT_VERSION = "1"
PARSER_VERSION = "3"  # 3: the output shape's placeholders and echoes of the prompt are invalid (issue 22)

PASS_1_BLIND_RECONSTRUCTION_PROMPT = """You are evaluating whether a stored conclusion can function as a PREMISE for future reasoning by a reader who will NEVER see the conversation it came from.

You are that reader. You have the statement below and nothing else. Do not imagine, guess, or reconstruct the missing conversation. Your reconstruction will later be graded against the real source: anything you invent will be caught, and inventing counts against you. When you cannot fill a slot from the statement’s own words, write UNKNOWN.

Task A: Reconstruct the proposition

Fill these slots using ONLY what the statement itself says:

• SUBJECT: Who or what is this claim about? Must be uniquely identifiable to a stranger. A bare first name is acceptable only if it is an established peer id convention; flag it if it could collide.
• PREDICATE_AND_FORCE: What did the subject do / say / believe / feel / plan / prefer? Preserve force markers exactly: “said”, “believes”, “might”, “did”, “was told”, “joked”. Note whether the claim is something the subject SAID versus something they DID — these license different inferences.
• OBJECT_OR_CONTENT: What is the act ABOUT? A reply requires what it replied to. An emotion requires its object. A plan requires its content. An agreement requires the proposal agreed to. A preference requires what is preferred.
• TIME: When does the claim hold? Enduring attributes (a birthday, a name, a portmanteau’s derivation) are SELF_ANCHORING. State claims (“is excited”, “works at”, “is 25”) are time-dependent and require an absolute anchor. Relative or missing anchors on time-dependent claims are UNKNOWN.
• SCOPE: If the claim is a preference, habit, or generalization: under what conditions does it hold? Write N/A for simple event claims.

The vacuity rule (critical)

A slot filled only by a bare existential does NOT count as filled. “A question”, “someone”, “something”, “a project”, “a woman” name THAT an object exists, not WHAT it is. Treat these as UNKNOWN. This applies even when the statement itself contains the vacuous phrase — “responded ‘yes’ to a question” has an UNKNOWN object, because no future reasoning can use “a question”.

Task B: Licensed inference

State ONE concrete inference or hypothesis a future reasoner could form using this statement as a premise, alone or combined with one plausible premise from a different conversation. The inference must depend on the SPECIFIC content of this statement.

Anti-vacuity check: if your best inference would remain equally true with the statement’s specifics replaced by “something / someone / at some point”, it is not an inference — write NONE. A premise that licenses nothing is inert regardless of how many slots are technically filled.

Task C: Decontextuality score

• 1.0: every required slot filled, non-vacuous inference produced
• 0.8: one minor gap (e.g. weakly disambiguated subject) but the proposition is complete and usable
• 0.6: usable core but a required anchor is missing (e.g. time-dependent claim with no date)
• 0.4: a load-bearing slot is UNKNOWN; the proposition is incomplete
• 0.2: multiple load-bearing slots UNKNOWN; the statement is parseable but inert
• 0.0: no recoverable proposition

Task D: Labels

Emit short free-text labels for each defect you found. Examples of the KIND of label (not an enum — coin new ones freely): missing-object-of-reply, unresolved-pronoun, relative-time, unanchored-state-claim, vague-referent, flattened-force, precision-without-context, bundled-claims, vacuous-object.

Also set BUNDLED: true if the statement carries more than one independently verifiable claim (count truth values, including subordinate clauses like “who owns a dog”). Bundling is scored elsewhere; here you only flag it.

Worked examples

Statement: “courtland responded with ‘yes’ on July 2, 2026 at 2:13:45 AM” → SUBJECT: courtland. PREDICATE_AND_FORCE: said (verbatim reply). OBJECT_OR_CONTENT: UNKNOWN — the thing assented to is absent; “yes” alone is not content. TIME: July 2, 2026. SCOPE: N/A. → LICENSED_INFERENCE: NONE — “courtland agreed to something at some point” survives the specifics being deleted. → SCORE: 0.2. LABELS: [missing-object-of-reply, precision-without-context]. BUNDLED: false.

Statement: “Bob, Alice’s boss at ACME, is retiring in November 2026” → SUBJECT: Bob, uniquely resolved via enduring descriptors (Alice’s boss at ACME). PREDICATE_AND_FORCE: is retiring (stated as fact). OBJECT_OR_CONTENT: retirement from the ACME role. TIME: November 2026. SCOPE: N/A. → LICENSED_INFERENCE: “A management opening at ACME after November 2026 could be Bob’s former position.” → SCORE: 1.0. LABELS: []. BUNDLED: false.

Statement: “michael said that he could murder Dwight” → SUBJECT: michael. PREDICATE_AND_FORCE: said + could — force preserved; reads as hyperbole, not assertion of intent. OBJECT_OR_CONTENT: hyperbolic statement about Dwight. TIME: UNKNOWN (event claim, no anchor). SCOPE: N/A. → LICENSED_INFERENCE: “Michael was frustrated with or performing exasperation about Dwight at the time of utterance.” → SCORE: 0.6 (usable, but the utterance is unanchored). LABELS: [relative-time]. BUNDLED: false.

Statement: “alice is 25 years old” → TIME: UNKNOWN — an age is a time-dependent state; true for one year, then silently false. The self-anchoring form is a birth date or “turned 25 on “. → SCORE: 0.6. LABELS: [unanchored-state-claim].

Output format

Return ONLY a JSON object: { "subject": "…", "predicate_and_force": "…", "object_or_content": "…", "time": "…", "scope": "…", "unknown_slots": ["…"], "licensed_inference": "… or NONE", "decontextuality_score": 0.0, "labels": ["…"], "bundled": false, "notes": "one or two sentences, only if something needs explaining" }

Statement to evaluate: {conclusion} """


PASS_2_SOURCE_VERIFICATION_PROMPT = """You are grading a blind reading of a stored conclusion against the source it was derived from.

A first judge read the conclusion WITHOUT the source and reconstructed the proposition it carries (JSON below). You have what that judge lacked: the full input window the deriver saw. Your job is to determine (1) whether the blind reading was correct, (2) whether the conclusion is licensed by the source, and (3) for every gap the blind judge found, WHERE the failure lives — because “the deriver dropped available context” and “the context was never in the window” demand entirely different fixes.

Question 1: Interpretation match

Compare the blind reconstruction to what the source actually shows the statement meant.

• MATCH: the blind reading (including its UNKNOWNs) is consistent with the source.
• MISMATCH: the blind judge confidently reconstructed the WRONG proposition — wrong referent, wrong object, wrong force. This is the worst failure class: the conclusion doesn’t just underdetermine its meaning, it actively misleads. Typical cause: context inherited across a topic switch.
• N/A: the blind reading was mostly UNKNOWNs; there is nothing substantive to match.

Question 2: License check

For EVERY element of the conclusion — subject, predicate, object, time, scope, and every subordinate descriptor riding along (e.g. “his dog Lex”) — is it supported by the window? Classify each unsupported element:

• OVER_INFERENCE: a plausible leap presented as stated fact (source: “took my dog for a walk in NYC” → conclusion: “lives in NYC”).
• FABRICATION: no basis in the window at all.
• MISATTRIBUTION: stated by or about someone other than the conclusion’s subject; includes the assistant’s own suggestion reflected back as the user’s claim.
• STALE_CONTEXT: real content from the window attached to the wrong statement (the switch-point failure).

Note: a legitimate deduction may be a fine conclusion — but if the deriver’s task was explicit extraction, label deductions as OVER_INFERENCE and let the harness decide severity. The license check protects the boundary; it does not decide policy.

Question 3: Force preservation

Does the conclusion’s force match the source’s? Check: hedges kept (“might”, “could”), said-vs-did preserved, attribution kept (“was told that” vs “believes”), register kept (a joke stored as a joke, not as a belief). FORCE_PRESERVED: true/false, with the specific flattening named if false.

Question 4: Time provenance

How was time handled, judged against the message timestamps in the window?

• ANCHORED_CORRECTLY: relative references resolved against the message’s stated timestamp.
• SELF_ANCHORING: no time needed (enduring attribute).
• HEDGED_APPROPRIATELY: anchor was genuinely untrustworthy or absent, and the conclusion preserved the uncertainty (e.g. “alice said, in a message dated July 10, 2026, that she went ‘yesterday’”) instead of guessing.
• ANCHOR_MISSING: relative or absent time on a time-dependent claim.
• ANCHOR_GUESSED: an absolute date was minted with no trustworthy basis.
• ANCHORED_TO_BAD_TIMESTAMP: the deriver correctly trusted the timestamp it was handed, and the timestamp itself was wrong (bad backdate, batch-ingest time). This is an INPUT failure, not a deriver failure — say so.

Question 5: Failure attribution (the decision-relevant one)

For EACH slot the blind judge marked UNKNOWN, and each defect found above:

• PRESENT_IN_WINDOW: the resolving context was in the deriver’s input and the deriver dropped it. → prompt/model failure; fixable by ML-332-style prompt work now.
• ABSENT_FROM_WINDOW: the resolving context existed in the conversation’s past but had left the token-capped window before derivation. → architecture/input failure; no prompt can fix it; needs context-retrieval-at-write-time.
• ABSENT_EVERYWHERE: the utterance never contained the resolving information (speaker said “that thing” and never disambiguated). → the correct deriver output may have been a hedged statement or silence; judge whether what was minted was better than nothing.

Output format

Return ONLY a JSON object: { "interpretation": "MATCH | MISMATCH | N/A", "interpretation_notes": "…", "unsupported_elements": [ {"element": "…", "classification": "OVER_INFERENCE | FABRICATION | MISATTRIBUTION | STALE_CONTEXT", "evidence": "brief pointer into the window"} ], "force_preserved": true, "force_notes": "…", "time_status": "ANCHORED_CORRECTLY | SELF_ANCHORING | HEDGED_APPROPRIATELY | ANCHOR_MISSING | ANCHOR_GUESSED | ANCHORED_TO_BAD_TIMESTAMP", "failure_attribution": [ {"gap": "which slot or defect", "attribution": "PRESENT_IN_WINDOW | ABSENT_FROM_WINDOW | ABSENT_EVERYWHERE", "evidence": "where in the window the context is, or why it is absent"} ], "labels": ["free-text failure labels; coin new ones freely"], "primary_cause": "one label naming the dominant failure, or NONE if clean" }

Conclusion under evaluation: {conclusion}

Blind reconstruction (pass 1 output): {pass_1_json}

Target peer: {peer_id}

Full input window the deriver saw (messages with timestamps): {window} """


SLOTS = ("subject", "predicate_and_force", "object_or_content", "time", "scope")
"""The five pass-1 slots, in the seed's order."""

INTERPRETATIONS = ("MATCH", "MISMATCH", "N/A")
CLASSIFICATIONS = ("OVER_INFERENCE", "FABRICATION", "MISATTRIBUTION", "STALE_CONTEXT")
TIME_STATUSES = (
    "ANCHORED_CORRECTLY",
    "SELF_ANCHORING",
    "HEDGED_APPROPRIATELY",
    "ANCHOR_MISSING",
    "ANCHOR_GUESSED",
    "ANCHORED_TO_BAD_TIMESTAMP",
)
ATTRIBUTIONS = ("PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE")

_PASS1_KEYS = (*SLOTS, "unknown_slots", "licensed_inference", "decontextuality_score", "labels", "bundled", "notes")
_PASS2_KEYS = (
    "interpretation",
    "interpretation_notes",
    "unsupported_elements",
    "force_preserved",
    "force_notes",
    "time_status",
    "failure_attribution",
    "labels",
    "primary_cause",
)
_ELEMENT_KEYS = ("element", "classification", "evidence")
_ATTRIBUTION_KEYS = ("gap", "attribution", "evidence")

_PLACEHOLDER = re.compile(r"\{(conclusion|pass_1_json|peer_id|window)\}")
_SHAPE_INTRO = "Return ONLY a JSON object: "


def shape_placeholders(template: str) -> tuple[str, ...]:
    """The string values of the template's example output object ("…", "… or NONE", "brief pointer
    into the window"...): read out of the seed's text rather than restated, so they cannot drift."""
    start = template.index(_SHAPE_INTRO) + len(_SHAPE_INTRO)
    shape, _end = json.JSONDecoder().raw_decode(template, start)
    return tuple(dict.fromkeys(string_leaves(shape)))


PASS1_PLACEHOLDERS = shape_placeholders(PASS_1_BLIND_RECONSTRUCTION_PROMPT)
PASS2_PLACEHOLDERS = shape_placeholders(PASS_2_SOURCE_VERIFICATION_PROMPT)
PASS1_INSTRUCTIONS = Instructions(*_PLACEHOLDER.split(PASS_1_BLIND_RECONSTRUCTION_PROMPT)[::2])
PASS2_INSTRUCTIONS = Instructions(*_PLACEHOLDER.split(PASS_2_SOURCE_VERIFICATION_PROMPT)[::2])
"""Each pass's own wording for the echo rule (``_guards``): the template's text between its
placeholders; the conclusion, the pass-1 JSON and the window are data a reply may quote."""


def _reject_placeholders(value: object, where: str, placeholders: tuple[str, ...], contract: str, raw: str) -> None:
    """Every string in the reply, at any depth, must be content rather than a placeholder of the shape."""
    if isinstance(value, str):
        reject_placeholder(value, where, placeholders, contract, raw)
    elif isinstance(value, dict):
        for k, v in value.items():
            _reject_placeholders(v, f"{where}.{k}" if where else str(k), placeholders, contract, raw)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _reject_placeholders(v, f"{where}[{i}]", placeholders, contract, raw)


def _marker(value: str, word: str) -> bool:
    """``value`` is the marker word alone or followed by an explanation ("UNKNOWN — absent").

    Upper case (the seed's spelling) may be followed by any non-word character. Another case must
    be followed by nothing or by punctuation, so "Unknown - no date" and "none." are markers but
    the English words opening "None of his aides would resign" or "Unknown Soldier" are not.
    """
    v = value.strip()
    head, rest = v[: len(word)], v[len(word):]
    if head.upper() != word:
        return False
    if not rest:
        return True
    if head == word:
        return not (rest[0].isalnum() or rest[0] == "_")
    after = rest.lstrip()
    return rest[0] != "_" and not rest[0].isalnum() and (not after or not (after[0].isalnum() or after[0] == "_"))


def is_unknown(value: str) -> bool:
    """A slot value that marks the slot as UNKNOWN (see the module docstring for the rule)."""
    return _marker(value, "UNKNOWN")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Pass1Result(_Frozen):
    """The blind reconstruction: the seed's pass-1 keys, validated."""

    subject: str
    predicate_and_force: str
    object_or_content: str
    time: str
    scope: str
    unknown_slots: tuple[str, ...]
    licensed_inference: str
    decontextuality_score: float
    labels: tuple[str, ...]
    bundled: bool
    notes: str

    @property
    def licenses_inference(self) -> bool:
        """False when the judge wrote NONE: a premise that licenses nothing is inert."""
        return not _marker(self.licensed_inference, "NONE")

    def unknown(self) -> tuple[str, ...]:
        """Slots that are UNKNOWN, listed or written as such, in the seed's slot order."""
        listed = set(self.unknown_slots)
        return tuple(s for s in SLOTS if s in listed or is_unknown(getattr(self, s)))

    def to_json(self) -> str:
        """The normalised pass-1 JSON handed to pass 2: seed key order, no fence, unicode kept."""
        d = self.model_dump()
        return json.dumps({k: list(d[k]) if isinstance(d[k], tuple) else d[k] for k in _PASS1_KEYS}, ensure_ascii=False)


class UnsupportedElement(_Frozen):
    element: str
    classification: Literal["OVER_INFERENCE", "FABRICATION", "MISATTRIBUTION", "STALE_CONTEXT"]
    evidence: str


class Attribution(_Frozen):
    gap: str
    attribution: Literal["PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE"]
    evidence: str


class Pass2Result(_Frozen):
    """The source verification: the seed's pass-2 keys, validated."""

    interpretation: Literal["MATCH", "MISMATCH", "N/A"]
    interpretation_notes: str
    unsupported_elements: tuple[UnsupportedElement, ...]
    force_preserved: bool
    force_notes: str
    time_status: Literal[
        "ANCHORED_CORRECTLY",
        "SELF_ANCHORING",
        "HEDGED_APPROPRIATELY",
        "ANCHOR_MISSING",
        "ANCHOR_GUESSED",
        "ANCHORED_TO_BAD_TIMESTAMP",
    ]
    failure_attribution: tuple[Attribution, ...]
    labels: tuple[str, ...]
    primary_cause: str

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False)


class WindowMessage(_Frozen):
    """One message of the deriver's input window with its time reference (free text)."""

    speaker: str
    time: str
    text: str


# -- prompt builders -------------------------------------------------------------------------


def _fill(template: str, values: dict[str, str]) -> str:
    # One pass: text substituted for one placeholder is never scanned for another.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def render_window(window: Sequence[WindowMessage], note: str | None = None) -> str:
    """The window as pass 2 reads it: an optional note, then one numbered line per message.

    Every message carries its time reference in brackets, so the judge can grade time handling
    against it; an empty window is said to be empty rather than left blank.
    """
    lines = [note.strip()] if note and note.strip() else []
    if not window:
        lines.append("(the window is empty: the deriver saw no messages)")
    for i, m in enumerate(window, start=1):
        lines.append(f"[{i}] [time: {m.time}] {m.speaker}: {m.text}")
    return "\n" + "\n".join(lines) + "\n"


def build_pass1_messages(conclusion: str) -> list[Message]:
    """The blind call: the statement and nothing else (no window, deriver prompt or siblings)."""
    return [{"role": "user", "content": _fill(PASS_1_BLIND_RECONSTRUCTION_PROMPT, {"conclusion": conclusion})}]


def build_pass2_messages(
    conclusion: str,
    pass1_json: str,
    peer_id: str,
    window: Sequence[WindowMessage],
    *,
    window_note: str | None = None,
) -> list[Message]:
    """The verification call: conclusion, the full pass-1 JSON, the peer id and the whole window.

    Args:
        pass1_json: pass 1's output as JSON text (``Pass1Result.to_json()`` for a parsed reply).
        window_note: a line placed before the messages, e.g. that the input has no wall-clock dates.
    """
    values = {
        "conclusion": conclusion,
        "pass_1_json": pass1_json,
        "peer_id": peer_id,
        "window": render_window(window, window_note),
    }
    return [{"role": "user", "content": _fill(PASS_2_SOURCE_VERIFICATION_PROMPT, values)}]


# -- strict parsers --------------------------------------------------------------------------


def _text_list(value: object, field: str, contract: str, raw: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        fail(contract, f"{field} must be a list, got {type(value).__name__}", raw)
    return tuple(require_text(v, f"{field}[{i}]", contract, raw) for i, v in enumerate(value))


def _string(value: object, field: str, contract: str, raw: str) -> str:
    """A string that may be empty (commentary fields)."""
    if not isinstance(value, str):
        fail(contract, f"{field} must be a string, got {type(value).__name__}", raw)
    return value.strip()


def _bool(value: object, field: str, contract: str, raw: str) -> bool:
    if not isinstance(value, bool):
        fail(contract, f"{field} must be true or false, got {type(value).__name__} {value!r}", raw)
    return value


def _objects(value: object, field: str, keys: tuple[str, ...], contract: str, raw: str) -> list[dict]:
    if not isinstance(value, list):
        fail(contract, f"{field} must be a list, got {type(value).__name__}", raw)
    for i, v in enumerate(value):
        if not isinstance(v, dict):
            fail(contract, f"{field}[{i}] must be an object, got {type(v).__name__}", raw)
        require_keys(v, keys, contract, raw, where=f"{field}[{i}]")
    return value


def parse_pass1(raw: str) -> Pass1Result:
    """Parse a pass-1 reply strictly (see the module docstring for the decisions).

    Raises:
        ContractParseError: any breach, with the raw text.
    """
    c = PASS1_NAME
    obj = load_object(raw, c, PASS1_INSTRUCTIONS)
    require_keys(obj, _PASS1_KEYS, c, raw)
    _reject_placeholders(obj, "", PASS1_PLACEHOLDERS, c, raw)
    slots = {s: require_text(obj[s], s, c, raw) for s in SLOTS}
    unknown = _text_list(obj["unknown_slots"], "unknown_slots", c, raw)
    names = tuple(u.lower() for u in unknown)
    for u, n in zip(unknown, names):
        if n not in SLOTS:
            fail(c, f"unknown_slots entry {u!r} is not one of the slots {list(SLOTS)}", raw)
    if len(set(names)) != len(names):
        fail(c, f"unknown_slots repeats a slot: {list(unknown)}", raw)
    score = obj["decontextuality_score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        fail(c, f"decontextuality_score must be a number, got {type(score).__name__} {score!r}", raw)
    if not 0.0 <= score <= 1.0:
        fail(c, f"decontextuality_score must be between 0 and 1, got {score}", raw)
    return Pass1Result(
        **slots,
        unknown_slots=names,
        licensed_inference=require_text(obj["licensed_inference"], "licensed_inference", c, raw),
        decontextuality_score=float(score),
        labels=_text_list(obj["labels"], "labels", c, raw),
        bundled=_bool(obj["bundled"], "bundled", c, raw),
        notes=_string(obj["notes"], "notes", c, raw),
    )


def parse_pass2(raw: str) -> Pass2Result:
    """Parse a pass-2 reply strictly: every key required, enumerations exact and case-sensitive.

    Raises:
        ContractParseError: any breach, with the raw text.
    """
    c = PASS2_NAME
    obj = load_object(raw, c, PASS2_INSTRUCTIONS)
    require_keys(obj, _PASS2_KEYS, c, raw)
    _reject_placeholders(obj, "", PASS2_PLACEHOLDERS, c, raw)
    elements = [
        UnsupportedElement(
            element=require_text(e["element"], f"unsupported_elements[{i}].element", c, raw),
            classification=require_choice(
                e["classification"], f"unsupported_elements[{i}].classification", CLASSIFICATIONS, c, raw
            ),
            evidence=require_text(e["evidence"], f"unsupported_elements[{i}].evidence", c, raw),
        )
        for i, e in enumerate(_objects(obj["unsupported_elements"], "unsupported_elements", _ELEMENT_KEYS, c, raw))
    ]
    attributions = [
        Attribution(
            gap=require_text(a["gap"], f"failure_attribution[{i}].gap", c, raw),
            attribution=require_choice(
                a["attribution"], f"failure_attribution[{i}].attribution", ATTRIBUTIONS, c, raw
            ),
            evidence=require_text(a["evidence"], f"failure_attribution[{i}].evidence", c, raw),
        )
        for i, a in enumerate(_objects(obj["failure_attribution"], "failure_attribution", _ATTRIBUTION_KEYS, c, raw))
    ]
    return Pass2Result(
        interpretation=require_choice(obj["interpretation"], "interpretation", INTERPRETATIONS, c, raw),
        interpretation_notes=_string(obj["interpretation_notes"], "interpretation_notes", c, raw),
        unsupported_elements=tuple(elements),
        force_preserved=_bool(obj["force_preserved"], "force_preserved", c, raw),
        force_notes=_string(obj["force_notes"], "force_notes", c, raw),
        time_status=require_choice(obj["time_status"], "time_status", TIME_STATUSES, c, raw),
        failure_attribution=tuple(attributions),
        labels=_text_list(obj["labels"], "labels", c, raw),
        primary_cause=require_text(obj["primary_cause"], "primary_cause", c, raw),
    )

