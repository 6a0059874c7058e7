"""The deterministic offline model: answers every InterviewSim prompt contract in a valid shape.

It reads only the prompt a real model would receive (the messages before any assistant turn),
recognises which contract it is by the ``MARKER`` heading each contract template contains, and
hands it to that contract's responder module in this package. Responders parse the template
back and answer from the prompt's own content with simple lexical rules (best-overlap example,
cosine-overlap bins calibrated on the sample corpus, extractive summaries, context-supported MCQ
options, lexicon counts).

It is a smoke-test baseline so the demo, the tests and CI run the real pipeline with no key and no
network. Its scores say nothing about simulation quality and must never be reported as a judge.

Responders are discovered, not listed: any non-private submodule defining ``detects(prompt) ->
bool`` and ``answer(prompt) -> str`` takes part. When several detect a prompt, the one whose
``MARKER`` appears earliest wins (the task heading opens the system message; a later match is
quoted content).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType
from typing import Any, Mapping, Sequence


class UnrecognisedPromptError(ValueError):
    """No responder recognises the prompt: the offline model only speaks InterviewSim's contracts."""


@lru_cache(maxsize=1)
def responders() -> tuple[ModuleType, ...]:
    """Every responder submodule, in name order (stable tie-breaking)."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if callable(getattr(mod, "detects", None)) and callable(getattr(mod, "answer", None)):
            found.append(mod)
    return tuple(found)


def _content(message: Mapping[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    # OpenAI "content parts" shape: keep the text parts in order.
    return "\n".join(p.get("text", "") for p in content if isinstance(p, Mapping))


def prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The prompt as one string: the messages before the first assistant turn.

    A re-ask appends the rejected reply and a complaint; the offline answer depends only on the
    original prompt, which is where the contract's inputs are.
    """
    parts = []
    for m in messages:
        if m.get("role") == "assistant":
            break
        parts.append(_content(m))
    return "\n\n".join(parts)


def _position(mod: ModuleType, prompt: str) -> int:
    marker = getattr(mod, "MARKER", None)
    pos = prompt.find(marker) if isinstance(marker, str) and marker else -1
    return pos if pos >= 0 else len(prompt)


def respond(messages: Sequence[Mapping[str, Any]]) -> str:
    """The offline model's reply to a chat prompt.

    Raises:
        UnrecognisedPromptError: the prompt is not one of the known contracts.
    """
    prompt = prompt_text(messages)
    matches = [m for m in responders() if m.detects(prompt)]
    if not matches:
        raise UnrecognisedPromptError("offline model: no InterviewSim contract recognised in the prompt")
    best = min(matches, key=lambda m: _position(m, prompt))
    return best.answer(prompt)


__all__ = ["respond", "responders", "prompt_text", "UnrecognisedPromptError"]
