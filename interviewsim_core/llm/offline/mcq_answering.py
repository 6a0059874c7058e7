"""Offline MCQ answering: per item, the option sharing most content words with the context.

Context words come from the profile and the training examples in the prompt. Ties, and prompts with
no context, go to the first label; a baseline that mostly reflects lexical overlap, by design.
"""

from __future__ import annotations

import re

from ...contracts import generation as gen_contract
from ...contracts import mcq_answering as contract
from ._text import content_tokens, read_block

MARKER = contract.MARKER

_ITEM = re.compile(r"^Q(\d+): ")
_OPTION = re.compile(r"^([A-D])\. (.*)$")
_PROFILE = re.compile(
    rf"^{re.escape(gen_contract.PROFILE_HEADING)}\n(.*?)\n\n(?:{re.escape(gen_contract.EXAMPLES_HEADING)}|Questions \()",
    re.MULTILINE | re.DOTALL,
)


def detects(prompt: str) -> bool:
    return MARKER in prompt


def _context_words(prompt: str) -> set[str]:
    head = prompt.split("\n" + contract.QUESTIONS_OPEN + "\n", 1)[0]
    words: set[str] = set()
    for line in head.splitlines():
        for prefix in (gen_contract.EXAMPLE_QUESTION, gen_contract.EXAMPLE_RESPONSE):
            if line.startswith(prefix):
                words |= content_tokens(line[len(prefix) :])
    m = _PROFILE.search(prompt)
    if m:
        words |= content_tokens(m.group(1))
    return words


def _items(prompt: str) -> list[list[tuple[str, str]]]:
    block = read_block(prompt, contract.QUESTIONS_OPEN.strip("<>")) or ""
    items: list[list[tuple[str, str]]] = []
    for line in block.splitlines():
        if _ITEM.match(line):
            items.append([])
        elif (m := _OPTION.match(line)) and items:
            items[-1].append((m.group(1), m.group(2)))
    return items


def answer(prompt: str) -> str:
    context = _context_words(prompt)
    lines = []
    for i, options in enumerate(_items(prompt), start=1):
        best_label, best_score = (options[0][0] if options else "A"), -1
        for label, text in options:
            score = len(content_tokens(text) & context)
            if score > best_score:
                best_label, best_score = label, score
        lines.append(f"Q{i}: {best_label}")
    return "\n".join(lines)
