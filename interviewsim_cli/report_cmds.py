"""``interviewsim report``: the leaderboard, the paper's analyses and the HTML + JSON report of a run.

Reads whatever tables exist under ``--data-root`` (sections whose inputs are missing say "not
run"), writes ``report.html`` (one self-contained file) and ``report.json`` under ``--out``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register", "report"]


def report(
    data_root: Annotated[Path, typer.Option("--data-root", help="Folder the evaluation wrote its Parquet tables to.")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Output folder (default: <data-root>/report).")] = None,
    categories: Annotated[Optional[Path], typer.Option(
        "--categories", help="Optional CSV with columns personality_id, category (breakdown by category).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap and permutation draws.")] = 0,
) -> None:
    """Write report.html and report.json for the run under --data-root."""
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.report import build_report, leaderboard_markdown, write_report

    if not data_root.is_dir():
        typer.echo(f"error: --data-root {data_root} is not a folder", err=True)
        raise typer.Exit(2)
    if categories is not None and not categories.is_file():
        typer.echo(f"error: --categories {categories} is not a file", err=True)
        raise typer.Exit(2)
    try:
        data = build_report(data_root, categories_csv=categories, seed=seed)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    paths = write_report(data_root, out, report_data=data)
    typer.echo(leaderboard_markdown(data, with_ci=False))
    not_run = [s.title for s in data.sections.values() if s.status != "ok"]
    if not_run:
        typer.echo("\nNot run: " + "; ".join(not_run))
    typer.echo(f"\nreport: {paths.html}\njson:   {paths.json}")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
