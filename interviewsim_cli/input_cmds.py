"""``interviewsim validate`` and ``interviewsim split``: look at a corpus before spending model calls on it.

Both commands list every input problem on stderr and exit 1 instead of showing a traceback, so
the same commands serve people fixing a corpus and scripts gating a run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from interviewsim_core.errors import InputValidationError, Problem, SplitError
from interviewsim_core.loader import LoadedDocument, load_paths, validate_paths
from interviewsim_core.split import TEST_FRACTION, HeldOutSplit, split_personality

__all__ = ["register", "split_summary"]

_PATHS = Annotated[
    list[Path],
    typer.Argument(help="prepared_input.json files or corpus folders (one sub-folder per personality)."),
]


def _report_problems(problems: list[Problem]) -> None:
    typer.echo(f"{len(problems)} problem(s) in the input:", err=True)
    for p in problems:
        typer.echo(f"{p.file}: {p.path}: [{p.rule}] {p.message}", err=True)


def _side(interviews: tuple, pairs: tuple) -> dict:
    return {
        "interviews": len(interviews),
        "qa_pairs": len(pairs),
        "interview_ids": [itv.interview_id for itv in interviews],
        "qa_ids": [p.qa_id for p in pairs],
    }


def split_summary(item: LoadedDocument, split: HeldOutSplit) -> dict:
    """The JSON-ready description of one personality's hold-out, shared by both output modes."""
    return {
        "personality_id": split.personality_id,
        "file": str(item.path),
        "interviews": len(item.doc.interviews),
        "qa_pairs": len(split.train_pairs) + len(split.test_pairs),
        "train": _side(split.train_interviews, split.train_pairs),
        "test": _side(split.test_interviews, split.test_pairs),
    }


def _load_or_exit(paths: list[Path]) -> list[LoadedDocument]:
    try:
        return load_paths(paths)
    except InputValidationError as exc:
        _report_problems(exc.problems)
        raise typer.Exit(1) from None


def validate(paths: _PATHS) -> None:
    """Check files or corpus folders against INPUT_SCHEMA.md; list every problem, or one line per personality."""
    problems = validate_paths(paths)
    if problems:
        _report_problems(problems)
        raise typer.Exit(1)
    for item in load_paths(paths):
        doc = item.doc
        n_pairs = sum(len(itv.qa_pairs) for itv in doc.interviews)
        split = split_personality(doc)
        typer.echo(
            f"{doc.personality_id}: ok, {len(doc.interviews)} interviews, {n_pairs} QA pairs, "
            f"split {len(split.train_interviews)} train / {len(split.test_interviews)} test interviews "
            f"({item.path})"
        )


def split(
    paths: _PATHS,
    as_json: Annotated[bool, typer.Option("--json", help="Print one machine-readable JSON document.")] = False,
) -> None:
    """Show each personality's chronological hold-out: counts and interview ids of both sides."""
    loaded = _load_or_exit(paths)
    summaries: list[dict] = []
    refused: list[Problem] = []
    for item in loaded:
        try:
            summaries.append(split_summary(item, split_personality(item.doc)))
        except SplitError as exc:
            refused.append(Problem(str(item.path), "$.interviews", "too-few-interviews", str(exc)))
    if refused:
        _report_problems(refused)
        raise typer.Exit(1)
    if as_json:
        typer.echo(json.dumps({"test_fraction": TEST_FRACTION, "personalities": summaries}, indent=2, ensure_ascii=False))
        return
    for s in summaries:
        train, test = s["train"], s["test"]
        typer.echo(
            f"{s['personality_id']}: {s['interviews']} interviews, {s['qa_pairs']} QA pairs "
            f"-> train {train['interviews']} interviews / {train['qa_pairs']} QA pairs, "
            f"test {test['interviews']} interviews / {test['qa_pairs']} QA pairs"
        )
        typer.echo(f"  train: {', '.join(train['interview_ids'])}")
        typer.echo(f"  test:  {', '.join(test['interview_ids'])}")


def register(app: typer.Typer) -> None:
    """Add ``validate`` and ``split`` to the ``interviewsim`` command."""
    app.command("validate")(validate)
    app.command("split")(split)
