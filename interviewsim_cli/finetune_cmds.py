"""``interviewsim sft-data``: the training pairs as fine-tuning JSONL (paper section 4.3).

Training the adapters is done with the user's own tools (it needs GPUs); this writes what those
tools read, from the same hold-out the evaluation uses, so an adapter never sees a test answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from interviewsim_core.errors import InputValidationError, SplitError

__all__ = ["register"]


def sft_data(
    corpus: Annotated[Path, typer.Option(help="Corpus folder (one sub-folder per personality) or a file.")],
    out: Annotated[Path, typer.Option(help="Folder for <personality>.jsonl and all_personalities.jsonl.")],
) -> None:
    """Write each personality's *training* pairs as chat-format JSONL, plus one all-personality file."""
    from interviewsim_core.finetune import write_sft_files
    from interviewsim_core.loader import load_paths
    from interviewsim_core.split import split_personality

    try:
        splits = [split_personality(item.doc) for item in load_paths([corpus])]
    except InputValidationError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    except SplitError as exc:
        typer.echo(f"cannot split: {exc}", err=True)
        raise typer.Exit(1) from None
    written = write_sft_files(splits, out)
    for key, path in written.items():
        typer.echo(f"{key}: {path}")


def register(app: typer.Typer) -> None:
    app.command("sft-data")(sft_data)
