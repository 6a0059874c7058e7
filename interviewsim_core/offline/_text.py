"""Lexical helpers for the offline responders: tokens, sentences, overlap, negation, prompt blocks.

Deliberately crude (lowercase word tokens, a short stop list): the offline model is a smoke-test
baseline that must be deterministic and dependency-free, not a language model.
"""

from __future__ import annotations

import functools
import re

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from as into about over after before
    is are was were be been being am do does did have has had i me my we our you your he him his she
    her it its they them their this that these those there here what which who whom whose when where
    why how all any some just very really also too than well oh yes yeah would could should will can
    may might must shall one get got go going know think say said like much many more most""".split()
)
NEGATIONS = frozenset({"not", "no", "never", "nothing", "none", "neither", "nor", "cannot", "nobody", "nowhere"})


def tokens(text: str) -> list[str]:
    """Lowercase word tokens, apostrophe contractions kept whole (``don't``)."""
    return _TOKEN.findall(text.lower())


def content_tokens(text: str) -> set[str]:
    """Distinct tokens minus stop words and negations: what a text is *about*."""
    return {t for t in tokens(text) if t not in STOPWORDS and t not in NEGATIONS and not t.endswith("n't")}


_SUFFIXES = ("ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")


@functools.lru_cache(maxsize=1 << 16)
def stem(token: str) -> str:
    """A crude suffix strip so ``farms``/``farming``/``farm`` meet; keeps at least three letters.

    Without it, two texts about the same thing in different inflections share nothing, and
    every lexical score collapses toward its floor on real answers. Cached: a vocabulary is small
    beside the tokens an offline run stems (the curation's plan stems every word of every pair).
    """
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)]
    return token


class Lexicon:
    """Cue words per category, matched by stem: how many tokens of a text cue each category.

    A token counts once for every category whose cue words share its stem. Which categories a token
    cues is remembered per token, and the tokens already looked up are a set: a text's tokens are
    filtered at C speed (a set difference for the new ones, a dict membership for the cues), so only
    the new tokens and the cue hits run Python code. The offline tagger counts every word of every pair
    of a curation this way, and almost no word is a cue.
    """

    SEEN_MAX = 1 << 17
    """Tokens remembered as looked up before the set is emptied (a vocabulary, not a corpus)."""

    def __init__(self, words: dict[str, str], order: tuple[str, ...]) -> None:
        stems = {cat: {stem(w) for w in text.split()} for cat, text in words.items()}
        self.order = order
        self._of_stem = {s: tuple(c for c in order if s in stems[c]) for group in stems.values() for s in group}
        self._of_token: dict[str, tuple[str, ...]] = {}
        self._seen: set[str] = set()

    def _cues(self, toks: list[str]) -> filter:
        new = set(toks).difference(self._seen)
        if new:
            if len(self._seen) > self.SEEN_MAX:
                self._seen.clear()  # only the cue tokens' categories are kept: a few per cue word
            for tok in new:
                cats = self._of_stem.get(stem(tok))
                if cats:
                    self._of_token[tok] = cats
            self._seen.update(new)  # after ``_of_token``: a token seen is a token whose cues are known
        return filter(self._of_token.__contains__, toks)

    def counts(self, *weighted: tuple[int, str]) -> dict[str, int]:
        """Category -> the sum over (weight, text) of weight x the text's tokens that cue it, every category present."""
        counts = dict.fromkeys(self.order, 0)
        for weight, text in weighted:
            for tok in self._cues(tokens(text)):
                for cat in self._of_token[tok]:
                    counts[cat] += weight
        return counts

    def best(self, default: str, *weighted: tuple[int, str]) -> tuple[str, int]:
        """(the category with the highest count, the earlier one in ``order`` on a tie, or ``default`` when no
        token cues any; that count)."""
        counts = self.counts(*weighted)
        top = max(counts.values())
        return (default if top == 0 else next(c for c in self.order if counts[c] == top)), top


def content_stems(text: str) -> set[str]:
    """The stems of a text's content words (see ``content_tokens`` and ``stem``)."""
    return {stem(t) for t in content_tokens(text)}


def cosine(a: set[str], b: set[str]) -> float:
    """|a & b| / sqrt(|a| |b|): overlap that neither rewards a tiny text contained in a long one
    (as overlap over the shorter would) nor punishes length mismatch as hard as Jaccard."""
    return len(a & b) / (len(a) * len(b)) ** 0.5 if a and b else 0.0


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b|, 0 for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def is_negated(text: str) -> bool:
    """Whether a text carries a plain negation word or an n't contraction."""
    return any(t in NEGATIONS or t.endswith("n't") for t in tokens(text))


def one_line(text: str) -> str:
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    """Sentences split after . ! or ?, whitespace-collapsed, blanks dropped."""
    return [s for s in (one_line(p) for p in _SENTENCE_END.split(text.strip())) if s]


def first_sentence(text: str) -> str:
    found = sentences(text)
    return found[0] if found else ""


def read_block(prompt: str, tag: str) -> str | None:
    """The text of the first ``<tag>`` ... ``</tag>`` block whose tags sit on their own lines."""
    m = re.search(rf"^<{tag}>\n(.*?)\n</{tag}>$", prompt, re.MULTILINE | re.DOTALL)
    return m.group(1) if m else None


def lines_after(prompt: str, header: re.Pattern[str], prefix: str) -> list[str]:
    """The consecutive ``prefix``-lines right after the first match of ``header``, prefix removed."""
    m = header.search(prompt)
    if m is None:
        return []
    out = []
    for line in prompt[m.end() :].splitlines():
        if not line.startswith(prefix):
            break
        out.append(line[len(prefix) :])
    return out
