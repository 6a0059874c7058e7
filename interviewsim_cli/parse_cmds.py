"""``interviewsim parse CONTRACT``: run one raw model output through its contract's strict parser.

For people debugging a judge: paste a reply on stdin, get the parsed result as JSON on stdout
(exit 0) or the contract breach on stderr (exit 1), exactly as the pipeline would see it. A
missing or unusable option is a usage problem and exits 2.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from enum import Enum
from typing import Annotated, Any, Callable, Optional

import typer

from interviewsim_core.contracts import (
    atomic_item,
    content_similarity,
    fact_summary,
    factual_consistency,
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
from interviewsim_core.errors import ContractParseError

__all__ = ["register", "ParseTarget", "parser_for"]


class ParseTarget(str, Enum):
    """The CLI names of the contracts (kebab-case of the contract NAMEs, answers for answering)."""

    content_similarity = "content-similarity"
    fact_summary = "fact-summary"
    factual_consistency = "factual-consistency"
    personality = "personality"
    atomic_item = "atomic-item"
    mcq_generation = "mcq-generation"
    mcq_answers = "mcq-answers"
    premise_pass1 = "premise-pass1"
    premise_pass2 = "premise-pass2"
    speaker_attribution = "speaker-attribution"
    transcript_quality = "transcript-quality"
    qa_structuring = "qa-structuring"
    thematic_tagging = "thematic-tagging"
    personality_category = "personality-category"


class _Usage(ValueError):
    """A required option is missing or out of range for the chosen contract."""


def parser_for(
    target: ParseTarget,
    *,
    trait: str | None = None,
    atomic_question: str | None = None,
    atomic_answer: str | None = None,
    options: int | None = None,
    items: int | None = None,
) -> Callable[[str], Any]:
    """The one-argument parser for a CLI contract name and its options.

    Raises:
        ValueError: an option the contract needs is missing or invalid.
    """
    if target is ParseTarget.personality:
        if trait not in personality.TRAITS:
            raise _Usage(f"--trait must be one of {', '.join(personality.TRAITS)}")
        return personality.parse
    if target in (ParseTarget.mcq_generation, ParseTarget.mcq_answers) and options not in (3, 4):
        raise _Usage("--options must be 3 or 4")
    if target is ParseTarget.mcq_generation:
        if not atomic_question or not atomic_answer:
            raise _Usage("mcq-generation needs --atomic-question and --atomic-answer")
        return lambda raw: mcq_generation.parse(raw, atomic_question, atomic_answer, options)  # type: ignore[arg-type]
    if target is ParseTarget.mcq_answers:
        if items is None or items < 1:
            raise _Usage("mcq-answers needs --items N with N >= 1")
        label_sets = [mcq_generation.LABELS_BY_COUNT[options]] * items  # type: ignore[index]
        return lambda raw: mcq_answering.parse(raw, label_sets)
    simple: dict[ParseTarget, Callable[[str], Any]] = {
        ParseTarget.content_similarity: content_similarity.parse,
        ParseTarget.fact_summary: fact_summary.parse,
        ParseTarget.factual_consistency: factual_consistency.parse,
        ParseTarget.atomic_item: atomic_item.parse,
        ParseTarget.premise_pass1: premise.parse_pass1,
        ParseTarget.premise_pass2: premise.parse_pass2,
        ParseTarget.speaker_attribution: speaker_attribution.parse,
        ParseTarget.transcript_quality: transcript_quality.parse,
        ParseTarget.qa_structuring: qa_structuring.parse,
        ParseTarget.thematic_tagging: thematic_tagging.parse,
        ParseTarget.personality_category: personality_category.parse,
    }
    return simple[target]


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def parse_command(
    contract: Annotated[ParseTarget, typer.Argument(help="Which contract the output should satisfy.")],
    trait: Annotated[Optional[str], typer.Option(help="personality: the trait the prompt asked about.")] = None,
    atomic_question: Annotated[Optional[str], typer.Option(help="mcq-generation: the atomic question.")] = None,
    atomic_answer: Annotated[Optional[str], typer.Option(help="mcq-generation: the atomic answer.")] = None,
    options: Annotated[Optional[int], typer.Option(help="mcq-generation / mcq-answers: 3 or 4 options.")] = None,
    items: Annotated[Optional[int], typer.Option(help="mcq-answers: number of items (Q1..QN).")] = None,
) -> None:
    """Read one raw model output on stdin; print the parsed result as JSON, or the breach on stderr."""
    try:
        parser = parser_for(
            contract, trait=trait, atomic_question=atomic_question, atomic_answer=atomic_answer,
            options=options, items=items,
        )
    except _Usage as exc:
        typer.echo(f"usage: {exc}", err=True)
        raise typer.Exit(code=2) from None
    raw = sys.stdin.read()
    try:
        result = parser(raw)
    except ContractParseError as exc:
        typer.echo(f"{exc.contract}: {exc.reason}", err=True)
        raise typer.Exit(code=1) from None
    typer.echo(json.dumps(_jsonable(result), ensure_ascii=False, indent=2))


def register(app: typer.Typer) -> None:
    """Add ``parse`` to the ``interviewsim`` app."""
    app.command("parse")(parse_command)
