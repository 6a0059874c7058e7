"""Detecting held-out text in a prompt that must never see it.

The chronological hold-out is only meaningful if nothing derived from held-out responses reaches a
generator: not the responses, not the fact summary built from them. This module finds such text
verbatim in a prompt. Tests use it over every method and seed, and the Dagster layer runs it as an
asset check on stored prompts.

A sentence counts as a leak only when it is long enough to be specific (``MIN_WORDS``) and does
not also occur in material the generator may legitimately see (training pairs, profiles, held-out
*questions*): real interviews repeat boilerplate, and a sentence said in a training interview too
is not evidence of a leak.

Matching is one pass over the prompt, whatever the number of fragments: an Aho-Corasick automaton
of every fragment (``ahocorasick_rs``, over UTF-8 bytes) is built once per
personality. Searching each fragment with ``in`` instead cost time proportional to prompt size x
fragments: 0.2-0.4 s per Chrono-1000 prompt (700 KB, ~1,600 fragments), about 17 CPU-hours at the
paper's scale. A byte match of UTF-8 encodings is a character match (UTF-8 is self-synchronising),
so the findings are exactly those of ``fragment in text`` for every fragment; the test suite keeps
that naive detector and compares both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..llm.types import Message
from ..split import HeldOutSplit

MIN_WORDS = 8
"""Shorter sentences ("Thank you, Mr. President.") are too common to prove anything."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"
"""Every character ``str.split()`` splits on (``str.isspace``); a test checks the list is complete."""

_ASCII_WHITESPACE = tuple(c.encode() for c in WHITESPACE if c != " " and c.isascii())
_WIDE_WHITESPACE = tuple(c.encode() for c in WHITESPACE if not c.isascii())
_MARK = "\u241e"
"""What an exempt text is replaced by: not a word character, so no fragment can match across it."""


def _search(needles: Sequence[bytes]):
    import ahocorasick_rs as ac

    # The default implementation is a contiguous NFA: 2 MB and ~1 ms per 700 KB for the largest
    # personality, where a full DFA searched marginally faster but took 80 MB per detector.
    return ac.BytesAhoCorasick(list(needles), matchkind=ac.MatchKind.Standard)


_double_space = _wide_whitespace = None


def _normalise_utf8(data: bytes) -> bytes:
    """``normalise`` on UTF-8 bytes, where every step is a C-level pass.

    A byte-level replace of a character's UTF-8 encoding is a character-level replace (UTF-8 is
    self-synchronising), so this equals ``" ".join(text.split())`` encoded. Searching "  " with
    ``str.replace`` / ``in`` took 2 ms per 700 KB (a space is every sixth character); the compiled
    searcher finds every double space in microseconds, and each is cut out by slicing.
    """
    global _double_space, _wide_whitespace
    if _double_space is None:
        _double_space, _wide_whitespace = _search([b"  "]), _search(_WIDE_WHITESPACE)
    for w in _ASCII_WHITESPACE:  # one-byte needles: memchr
        if w in data:
            data = data.replace(w, b" ")
    if not data.isascii():  # multi-byte needles: one pass for all of them, not one each
        for w in {_WIDE_WHITESPACE[i] for i, _, _ in _wide_whitespace.find_matches_as_indexes(data)}:
            data = data.replace(w, b" ")
    starts = _double_space.find_matches_as_indexes(data, overlapping=True)
    if starts:
        # Overlapping matches: a run of k spaces matches at its first k-1 positions; dropping the
        # byte after each match start leaves one space per run.
        parts, last = [], 0
        for _, i, _ in starts:
            parts.append(data[last:i + 1])
            last = i + 2
        parts.append(data[last:])
        data = b"".join(parts)
    return data.strip(b" ")


def normalise(text: str) -> str:
    """Whitespace runs collapsed to one space and trimmed: prompts re-flow text onto one line.

    The same result as ``" ".join(text.split())`` without building one string per word, which took
    6 ms of a 700 KB prompt.
    """
    return _normalise_utf8(text.encode()).decode()


def sentences(text: str, min_words: int = MIN_WORDS) -> list[str]:
    """The sentences of ``text`` (normalised) with at least ``min_words`` words."""
    out = []
    for s in _SENTENCE_END.split(normalise(text)):
        s = s.strip()
        if len(s.split()) >= min_words:
            out.append(s)
    return out


class _Matcher:
    """Which of a fixed list of strings occur in a (normalised, UTF-8) text, in one pass over it."""

    def __init__(self, needles: Sequence[str]):
        self._search = _search([n.encode() for n in needles]) if needles else None

    def present(self, data: bytes) -> set[int]:
        """Indexes of the needles found in ``data`` (overlapping occurrences count)."""
        if self._search is None:
            return set()
        return {i for i, _, _ in self._search.find_matches_as_indexes(data, overlapping=True)}


class LeakDetector:
    """Held-out fragments of one personality, prepared once and matched against many prompts."""

    def __init__(self, split: HeldOutSplit, fact_summaries: Iterable[str] = (), min_words: int = MIN_WORDS):
        allowed_parts = [split.doc.personality.profile, split.doc.personality.long_profile]
        for p in split.train_pairs:
            allowed_parts += [p.question, p.response]
        allowed_parts += [p.question for p in split.test_pairs]
        allowed = "\n".join(normalise(t) for t in allowed_parts)

        fragments: list[str] = []
        for p in split.test_pairs:
            whole = normalise(p.response)
            if len(whole.split()) >= min_words:
                fragments.append(whole)
            fragments.extend(sentences(p.response, min_words))
        for summary in fact_summaries:
            if summary:
                fragments.extend(sentences(summary, min_words))
        # Longest first so a whole leaked response is reported as itself, not only as its sentences.
        candidates = sorted(dict.fromkeys(fragments), key=len, reverse=True)
        shared = _Matcher(candidates).present(allowed.encode())
        self.fragments: tuple[str, ...] = tuple(f for i, f in enumerate(candidates) if i not in shared)
        self._matcher = _Matcher(self.fragments)

    def find(self, messages: Sequence[Message] | str, exempt: Iterable[str] = ()) -> list[str]:
        """Held-out fragments present in ``messages``, in the order of ``fragments``.

        Args:
            messages: a prompt (chat messages) or its text.
            exempt: texts the prompt is meant to contain although they derive from held-out
                responses (the MCQ items being asked); they are removed before matching so only
                the context part of an answering prompt is checked.
        """
        text = messages if isinstance(messages, str) else "\n".join(m["content"] for m in messages)
        data = _normalise_utf8(text.encode())
        # Longest first (in characters, as the reference does) so a shorter exempt text inside a
        # longer one does not break the longer one's replacement.
        for e in sorted((normalise(x) for x in exempt if x and x.strip()), key=len, reverse=True):
            data = data.replace(e.encode(), _MARK.encode())
        return [self.fragments[i] for i in sorted(self._matcher.present(data))]


def heldout_leaks(
    split: HeldOutSplit,
    messages: Sequence[Message] | str,
    fact_summaries: Iterable[str] = (),
    exempt: Iterable[str] = (),
) -> list[str]:
    """Held-out response texts and fact-summary sentences found verbatim in a prompt (empty = clean).

    Build a ``LeakDetector`` instead when checking many prompts of one personality.
    """
    return LeakDetector(split, fact_summaries).find(messages, exempt)
