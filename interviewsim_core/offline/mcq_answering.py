"""Offline MCQ answering: per item, the option best supported by the person's words in the prompt.

Part of the offline smoke-test baseline, not a judge of quality. It reads the context the prompt
gives (profile and training responses) and weighs each option's content-word stems:

- a stem found in the context is evidence for the option (+1);
- a stem found in neither the context nor the item's question is an unsupported claim and costs
  ``UNSUPPORTED_COST`` times the option's unsupported *share*, so a long correct answer is not
  beaten by a short generic one merely for having more words the context lacks;
- polarity must be supported too: the context sentences sharing the most stems with the option
  (at least ``MIN_SHARED``, or all of a shorter option's) decide whether a negated or an affirmative version is what the person
  said; an option whose polarity they contradict costs ``POLARITY_COST``, and a negation with no
  such sentence at all is an unsupported extra word and costs ``BARE_NEGATION_COST``.

Equal scores are broken by a hash of the question and option text, so the winner of a tie is
reproducible but not tied to a position or a role. With no context at all the prompt carries no
evidence about the person, and the choice is that hash alone: deterministic, and unbiased across
roles (the options' shuffled positions and texts decide, not what the options are).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..contracts import generation as gen_contract
from ..contracts import mcq_answering as contract
from ._text import content_stems, is_negated, read_block, sentences


UNSUPPORTED_COST = 0.5
POLARITY_COST = 1.5
BARE_NEGATION_COST = 0.5
MIN_SHARED = 2

_ITEM = re.compile(r"^Q(\d+): (.*)$")
_OPTION = re.compile(r"^([A-D])\. (.*)$")
_PROFILE = re.compile(
    rf"^{re.escape(gen_contract.PROFILE_HEADING)}\n(.*?)\n\n(?:{re.escape(gen_contract.EXAMPLES_HEADING)}|Questions \()",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class _Sentence:
    stems: frozenset[str]
    negated: bool


@dataclass(frozen=True)
class _Context:
    stems: frozenset[str]
    sentences: tuple[_Sentence, ...]


@dataclass(frozen=True)
class _Item:
    question: str
    options: tuple[tuple[str, str], ...]  # (label, text)



def _context(prompt: str) -> _Context:
    """The person's own words: profile text and training responses (not the interviewer's questions)."""
    head = prompt.split("\n" + contract.QUESTIONS_OPEN + "\n", 1)[0]
    texts = [line[len(gen_contract.EXAMPLE_RESPONSE) :] for line in head.splitlines()
             if line.startswith(gen_contract.EXAMPLE_RESPONSE)]
    m = _PROFILE.search(head)
    if m:
        texts.append(m.group(1))
    sents = tuple(_Sentence(frozenset(content_stems(s)), is_negated(s)) for t in texts for s in sentences(t))
    stems = frozenset().union(*(s.stems for s in sents)) if sents else frozenset()
    return _Context(stems, sents)


def _items(prompt: str) -> list[_Item]:
    block = read_block(prompt, contract.QUESTIONS_OPEN.strip("<>")) or ""
    found: list[tuple[str, list[tuple[str, str]]]] = []
    for line in block.splitlines():
        if m := _ITEM.match(line):
            found.append((m.group(2), []))
        elif (m := _OPTION.match(line)) and found:
            found[-1][1].append((m.group(1), m.group(2)))
    return [_Item(q, tuple(opts)) for q, opts in found]


def _polarity_cost(stems: frozenset[str], negated: bool, context: _Context) -> float:
    # A one-word option ("crowds") can only share one stem; asking for two would ignore it.
    best, matches = max(0, min(MIN_SHARED, len(stems)) - 1), []
    for s in context.sentences:
        shared = len(stems & s.stems)
        if shared > best:
            best, matches = shared, [s]
        elif shared == best and matches:
            matches.append(s)
    if matches:
        return 0.0 if any(s.negated == negated for s in matches) else POLARITY_COST
    return BARE_NEGATION_COST if negated else 0.0


def score(text: str, question_stems: frozenset[str], context: _Context) -> float:
    """Evidence for one option; higher is better supported (see the module docstring)."""
    stems = frozenset(content_stems(text))
    supported = len(stems & context.stems)
    unsupported = len(stems - context.stems - question_stems)
    share = unsupported / len(stems) if stems else 0.0
    return supported - UNSUPPORTED_COST * share - _polarity_cost(stems, is_negated(text), context)


def _tie_key(question: str, text: str) -> bytes:
    return hashlib.sha256(f"{question}\x1f{text}".encode()).digest()


def choose(item: _Item, context: _Context) -> str:
    """The label of the chosen option."""
    if not item.options:
        return "A"
    if not context.sentences:
        return min(item.options, key=lambda o: _tie_key(item.question, o[1]))[0]
    q = frozenset(content_stems(item.question))
    return max(item.options, key=lambda o: (score(o[1], q, context), _tie_key(item.question, o[1])))[0]


def answer(prompt: str) -> str:
    context = _context(prompt)
    return "\n".join(f"Q{i}: {choose(item, context)}" for i, item in enumerate(_items(prompt), start=1))


RESPONDS = {contract.NAME: answer}
"""The contract this module answers, by name (what the dispatcher keys on)."""
