"""Personality Similarity (PS): one Big Five trait, one side's response collection, one level.

A prompt carries exactly one trait and a non-empty collection of responses from one side (the
held-out references, or one method's generations): the judge rates the collection, never a single
response and never all five traits at once. Each (trait, side) is judged in ``N_VOTES``
independent runs; the modal level is the trait's level, with confidence = its share of the votes,
and three different levels resolve to Neutral. Alignment compares the two sides' five levels.

Reply format, and the whitespace tolerated (decided here, documented because the seed says
"exactly")::

    <rate>Low|Neutral|High</rate> <justification>non-blank text</justification>

- whitespace before the first tag and after the last one is ignored;
- between ``</rate>`` and ``<justification>`` any run of whitespace (spaces, tabs, newlines) or
  none is accepted: models put a newline there as often as a space and it carries no meaning;
- inside ``<rate>`` nothing but the level, exactly cased: `` High`` or ``high`` is a breach;
- the justification may span lines, must contain non-whitespace, and may not contain another
  ``<rate>``/``<justification>`` tag; it is stored stripped;
- anything else before, between or after the tags is a breach.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.types import Message
from ._guards import Instructions, format_literals, reject_echo, reject_placeholder
from ._json import fail
from .generation import one_line

NAME = "personality"
CONTRACT_VERSION = "1"
PARSER_VERSION = "2"  # 2: each breach named; placeholders and echoes invalid (issue 22)

MARKER = "## InterviewSim task: Big Five trait rating"

TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
LEVELS = ("Low", "Neutral", "High")
Level = Literal["Low", "Neutral", "High"]
LEVEL_VALUE: dict[str, int] = {"Low": 1, "Neutral": 2, "High": 3}
N_VOTES = 3

TRAIT_DESCRIPTIONS = {
    "openness": "curiosity, imagination, openness to new ideas, art and experience",
    "conscientiousness": "organisation, discipline, dependability, planning and attention to duty",
    "extraversion": "sociability, assertiveness, energy and enjoyment of other people's company",
    "agreeableness": "warmth, cooperation, trust, modesty and consideration for others",
    "neuroticism": "anxiety, moodiness, vulnerability to stress and negative emotion",
}

LEVEL_PLACEHOLDER = "LEVEL"
JUSTIFICATION_PLACEHOLDER = "YOUR REASONS, FROM THE RESPONSES"
PLACEHOLDERS = (JUSTIFICATION_PLACEHOLDER,)
"""The justification's placeholder: the template is built from it and the parser refuses it as content
(``LEVEL`` is already refused as not a level)."""

SYSTEM_TEMPLATE = (
    MARKER + "\n"
    "You infer one Big Five (OCEAN) personality trait of a person from a collection of their "
    "interview responses. Judge the collection as a whole, not any single response.\n\n"
    "Trait: {trait} ({description}).\n"
    "Rate the person's level of this trait as exactly one of Low, Neutral or High.\n\n"
    "Reply with exactly this and nothing else:\n"
    f"<rate>{LEVEL_PLACEHOLDER}</rate> <justification>{JUSTIFICATION_PLACEHOLDER}</justification>\n"
    f"where {LEVEL_PLACEHOLDER} is Low, Neutral or High."
)

USER_HEADER = "Trait: {trait}\nResponses:"
RESPONSE_PREFIX = "- "

_REPLY = re.compile(
    r"\A<rate>(?P<rate>[^<]*)</rate>\s*<justification>(?P<just>.*)</justification>\Z", re.DOTALL
)
_TAG = re.compile(r"</?(?:rate|justification)>")
_ANY_TAG = re.compile(r"</?\s*([A-Za-z_][\w-]*)\s*/?>")
_TAGS = ("<rate>", "</rate>", "<justification>", "</justification>")

INSTRUCTIONS = Instructions(*format_literals(SYSTEM_TEMPLATE), *TRAIT_DESCRIPTIONS.values())
"""The contract's own wording, for the echo rule (``_guards``); the rated responses are data."""


class Result(BaseModel):
    """One categorical run: a level and its justification."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: Level
    justification: str


def _check_trait(trait: str) -> str:
    if trait not in TRAITS:
        raise ValueError(f"trait must be one of {TRAITS}, got {trait!r}")
    return trait


def build_messages(trait: str, responses: Sequence[str]) -> list[Message]:
    """Trait instructions first, then the collection, one response per line.

    Raises:
        ValueError: unknown trait, or an empty collection / blank response.
    """
    _check_trait(trait)
    if isinstance(responses, str):
        raise TypeError("responses must be a sequence of texts, not one string")
    texts = [one_line(r) for r in responses]
    if not texts or any(not t for t in texts):
        raise ValueError("personality rating needs a non-empty collection of non-blank responses")
    system = SYSTEM_TEMPLATE.format(trait=trait, description=TRAIT_DESCRIPTIONS[trait])
    user = "\n".join([USER_HEADER.format(trait=trait)] + [RESPONSE_PREFIX + t for t in texts])
    return [Message(role="system", content=system), Message(role="user", content=user)]


def shape_problems(text: str) -> list[str]:
    """Every way ``text`` (stripped) misses ``<rate>..</rate> <justification>..</justification>``, named.

    Called when the reply does not match the shape, so that the parse error (and the re-ask built
    from it) says *what* to fix: a misspelled or unknown tag, a missing or repeated tag, tags out of
    order, text before, between or after them.
    """
    problems: list[str] = []
    unknown = sorted({m.group(0) for m in _ANY_TAG.finditer(text)} - set(_TAGS))
    if unknown:
        problems.append(f"unknown tag(s) {unknown} (only {list(_TAGS)} are allowed; check the spelling)")
    counts = {tag: text.count(tag) for tag in _TAGS}
    missing = [tag for tag, n in counts.items() if n == 0]
    repeated = [tag for tag, n in counts.items() if n > 1]
    if missing:
        problems.append(f"missing {' and '.join(missing)}")
    if repeated:
        problems.append(f"{' and '.join(repeated)} more than once (give exactly one rating and one justification)")
    if not missing and not repeated:
        positions = [text.index(tag) for tag in _TAGS]
        if positions != sorted(positions):
            problems.append("tags out of order (it must be <rate>, </rate>, <justification>, </justification>)")
        else:
            before = text[: positions[0]].strip()
            between = text[positions[1] + len("</rate>") : positions[2]].strip()
            after = text[positions[3] + len("</justification>") :].strip()
            for where, extra in (("before <rate>", before), ("between </rate> and <justification>", between),
                                 ("after </justification>", after)):
                if extra:
                    problems.append(f"text {where}: {extra[:40]!r}")
            rate = text[positions[0] + len("<rate>") : positions[1]]
            if "<" in rate:
                problems.append(f"the rate holds a tag: {rate[:40]!r}")
    return problems or ["reply must be exactly <rate>LEVEL</rate> <justification>TEXT</justification>"]


def parse(raw: str) -> Result:
    """``<rate>Low|Neutral|High</rate> <justification>...</justification>``, see the module docstring.

    Raises:
        ContractParseError: any deviation from that shape, each problem named (``shape_problems``),
            a justification that is the template's placeholder, an echo of the instructions.
    """
    if not isinstance(raw, str):
        fail(NAME, f"reply must be text, got {type(raw).__name__}", str(raw))
    reject_echo(NAME, [raw], raw, INSTRUCTIONS)
    text = raw.strip()
    m = _REPLY.match(text)
    if m is None:
        fail(NAME, "reply must be exactly <rate>LEVEL</rate> <justification>TEXT</justification>: "
             + "; ".join(shape_problems(text)), raw)
    rate, just = m.group("rate"), m.group("just")
    if rate not in LEVELS:
        hint = ""
        if rate.strip() in LEVELS:
            hint = " (no spaces inside the tag)"
        elif rate.strip().capitalize() in LEVELS:
            hint = f" (write it exactly as {rate.strip().capitalize()!r}: the level is case-sensitive)"
        elif rate.strip() == LEVEL_PLACEHOLDER:
            hint = " (the instructions' placeholder: replace it with the level)"
        fail(NAME, f"rate must be exactly one of {list(LEVELS)}, got {rate!r}{hint}", raw)
    if _TAG.search(just):
        fail(NAME, "justification contains another rate/justification tag: " + "; ".join(shape_problems(text)), raw)
    if not just.strip():
        fail(NAME, "justification must not be blank", raw)
    justification = reject_placeholder(just.strip(), "justification", PLACEHOLDERS, NAME, raw)
    return Result(rate=rate, justification=justification)  # type: ignore[arg-type]


def modal_vote(rates: Sequence[str]) -> tuple[str, float]:
    """The trait's level from its ``N_VOTES`` runs and the share of votes it got.

    Three different levels resolve to ("Neutral", 1/3), the seed's public tie rule.

    Raises:
        ValueError: not exactly three votes, or a vote that is not a level.
    """
    if len(rates) != N_VOTES:
        raise ValueError(f"modal vote needs exactly {N_VOTES} votes, got {len(rates)}")
    for r in rates:
        if r not in LEVEL_VALUE:
            raise ValueError(f"vote must be one of {LEVELS}, got {r!r}")
    level, count = Counter(rates).most_common(1)[0]
    if count == 1:
        return "Neutral", 1 / N_VOTES
    return level, count / N_VOTES


def alignment(ref: Mapping[str, str], gen: Mapping[str, str]) -> float:
    """``1 - sum(|m(ref_t) - m(gen_t)|) / 10`` over the five traits (Low=1, Neutral=2, High=3).

    Raises:
        ValueError: either side does not have exactly the five traits, or has a non-level value.
    """
    for side, levels in (("reference", ref), ("generated", gen)):
        if set(levels) != set(TRAITS):
            raise ValueError(f"{side} levels must cover exactly the traits {TRAITS}, got {sorted(levels)}")
        for t, v in levels.items():
            if v not in LEVEL_VALUE:
                raise ValueError(f"{side} level for {t} must be one of {LEVELS}, got {v!r}")
    distance = sum(abs(LEVEL_VALUE[ref[t]] - LEVEL_VALUE[gen[t]]) for t in TRAITS)
    return 1 - distance / 10


# -- output shape (llm/constraints.py): a grammar where the server takes one (llama.cpp GBNF) ----
MAX_TOKENS = 320
"""Cap on a reply: one level and a short justification."""

OUTPUT_GRAMMAR = (
    'root ::= "<rate>" ("Low" | "Neutral" | "High") "</rate> <justification>" just "</justification>"\n'
    'just ::= [^<\\n] [^<]*\n'
)
"""The reply shape as GBNF: exactly what ``parse`` accepts, minus a justification holding ``<``."""
