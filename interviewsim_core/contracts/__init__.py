"""Every prompt contract, by name: ``REGISTRY[name]`` has ``.NAME``, ``.CONTRACT_VERSION``,
``.PARSER_VERSION`` and ``.parse``.

Callers (the gateway's cache key, the pipeline's judge identity, ``interviewsim parse``) look a
contract up here instead of importing modules by hand, so a new contract is one entry. The premise
judge is one module with two passes, hence two entries served by small adapters.

A contract module reads top to bottom: docstring (what we ask and why) -> NAME, CONTRACT_VERSION,
PARSER_VERSION -> prompt template constants -> frozen ``Result`` -> ``build_messages(...)`` (a list of
``llm.types.Message``) -> ``parse(raw, ...) -> Result``, which raises ``ContractParseError``. Contracts
never call a model. Bump CONTRACT_VERSION when a template's wording changes and PARSER_VERSION when
the parser's acceptance changes: both are part of a judge's identity, which decides what is re-scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Union

from . import (
    atomic_item,
    content_similarity,
    fact_summary,
    factual_consistency,
    generation,
    mcq_answering,
    mcq_generation,
    personality,
    personality_category,
    premise,
    qa_structuring,
    speaker_attribution,
    thematic_tagging,
    transcript_quality,
)


@dataclass(frozen=True)
class PassContract:
    """One pass of a multi-pass contract module, looking like a contract module to callers."""

    NAME: str
    CONTRACT_VERSION: str
    PARSER_VERSION: str
    parse: Callable[[str], Any]


Contract = Union[ModuleType, PassContract]

REGISTRY: dict[str, Contract] = {
    m.NAME: m
    for m in (
        generation,
        content_similarity,
        fact_summary,
        factual_consistency,
        personality,
        atomic_item,
        mcq_generation,
        mcq_answering,
        speaker_attribution,
        transcript_quality,
        qa_structuring,
        thematic_tagging,
        personality_category,
    )
}
REGISTRY[premise.PASS1_NAME] = PassContract(
    premise.PASS1_NAME, premise.CONTRACT_VERSION, premise.PARSER_VERSION, premise.parse_pass1
)
REGISTRY[premise.PASS2_NAME] = PassContract(
    premise.PASS2_NAME, premise.CONTRACT_VERSION, premise.PARSER_VERSION, premise.parse_pass2
)


def version_of(name: str) -> str:
    """``"<CONTRACT_VERSION>+<PARSER_VERSION>"``: part of a judge's identity and of every cache key.

    Raises:
        KeyError: unknown contract name.
    """
    try:
        c = REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown contract {name!r}; known: {sorted(REGISTRY)}") from None
    return f"{c.CONTRACT_VERSION}+{c.PARSER_VERSION}"


__all__ = ["REGISTRY", "PassContract", "version_of"]
