"""Two content rules every contract applies after its shape rules: a placeholder is not content, and
an echo of the instructions is not an answer.

Why: a small model asked for ``{"score": <integer 1-5>, "explanation": "<why this score ...>"}``
often returns the shape with the placeholder still in it, and a generation model often returns the
prompt it was given. Both pass a shape check; both are garbage a metric must not rest on (issue 22).

**Placeholders.** Each contract module defines the placeholders of its templates once, as
constants the templates are built from (or, for the premise judge's verbatim seed text, read out
of the template), and hands them to ``reject_placeholder``. A field is a placeholder when, after
stripping, collapsing whitespace, dropping surrounding quotes/angle brackets and case-folding, it
equals one; a bracketed placeholder (``<the short exact answer>``) also counts when it appears
anywhere in the field, since a value that still holds one was not filled in.

**Echoes.** ``Instructions`` holds the contract's own wording: the literal parts of its templates,
never what was filled into them (questions, responses, training examples, conclusions, windows
are data a reply may quote; the offline generator answers with a training response on purpose).
An output *echoes* when it contains a run of ``ECHO_WORDS`` consecutive words of one literal part,
words compared case-insensitively with punctuation and whitespace ignored. Twelve words is a
sentence of the tool's own wording: a paraphrase or a quoted label is far shorter, a copied prompt
far longer. The rule needs only the contract's templates, not the prompt that was sent, so a raw
output stored in a table is re-checked the same way by ``interviewsim parse``.
"""

from __future__ import annotations

import re
import string
from typing import Iterable, Sequence

from ..errors import ContractParseError

ECHO_WORDS = 12
"""Consecutive words of the instructions that make an output an echo (see the module docstring)."""

_WORD = re.compile(r"\w+")
_STRIP = " \t\r\n\"'`<>"


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def format_literals(template: str) -> list[str]:
    """The literal parts of a ``str.format`` template (the text between its ``{fields}``)."""
    return [lit for lit, _field, _spec, _conv in string.Formatter().parse(template) if lit]


class Instructions:
    """A contract's own wording, indexed for the echo rule.

    Args:
        parts: literal texts the tool wrote (whole templates that are never formatted, or the
            literal parts of those that are); each is searched on its own, so a run never spans
            a filled-in value.
    """

    def __init__(self, *parts: str):
        self.parts = tuple(p for p in parts if p.strip())
        self._runs: dict[tuple[str, ...], str] = {}
        for part in self.parts:
            spans = [(m.group(0).casefold(), m.start(), m.end()) for m in _WORD.finditer(part)]
            for i in range(len(spans) - ECHO_WORDS + 1):
                window = spans[i : i + ECHO_WORDS]
                key = tuple(w for w, _s, _e in window)
                self._runs.setdefault(key, part[window[0][1] : window[-1][2]])

    def echoed(self, text: str) -> str | None:
        """The first instruction run ``text`` repeats, as the instructions word it, or None."""
        words = _words(text)
        for i in range(len(words) - ECHO_WORDS + 1):
            hit = self._runs.get(tuple(words[i : i + ECHO_WORDS]))
            if hit is not None:
                return hit
        return None


def echo_reason(text: str, instructions: Instructions) -> str | None:
    """The parse-error reason for an echo, or None when ``text`` does not repeat the instructions."""
    hit = instructions.echoed(text)
    if hit is None:
        return None
    return (f"the reply repeats the instructions instead of answering them (it contains {hit[:80]!r}); "
            "write the answer itself")


def reject_echo(contract: str, texts: Iterable[str], raw: str, instructions: Instructions) -> None:
    """Raise when any of ``texts`` (the reply, or its text fields) echoes the instructions."""
    for text in texts:
        reason = echo_reason(text, instructions)
        if reason is not None:
            raise ContractParseError(contract, reason, raw)


def _norm(text: str) -> str:
    return " ".join(text.strip(_STRIP).split()).casefold().rstrip(".").strip(_STRIP)


def placeholder_in(value: str, placeholders: Sequence[str]) -> str | None:
    """The placeholder ``value`` is (or, for a bracketed one, still contains), or None."""
    folded, norm = value.casefold(), _norm(value)
    for p in placeholders:
        if norm == _norm(p) or (p.startswith("<") and p.casefold() in folded):
            return p
    return None


def reject_placeholder(value: str, field: str, placeholders: Sequence[str], contract: str, raw: str) -> str:
    """``value`` unchanged, or a ContractParseError saying which placeholder it left unfilled."""
    hit = placeholder_in(value, placeholders)
    if hit is not None:
        raise ContractParseError(
            contract, f"{field} is the instructions' placeholder {hit!r}, not content: write the {field} itself", raw)
    return value


def string_leaves(value: object) -> list[str]:
    """Every string inside a decoded JSON value (object values and array items, recursively)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in string_leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in string_leaves(v)]
    return []
