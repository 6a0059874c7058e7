"""``interviewsim report``: the leaderboard, the paper's analyses and the HTML + JSON report of a run.

Reads whatever tables exist under ``--data-root`` (sections whose inputs are missing say "not
run"), writes ``report.html`` (one self-contained file) and ``report.json`` under ``--out``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from interviewsim_core.embeddings import Embedder

__all__ = ["register", "report", "embedder_for", "parse_pairs"]

_OFFLINE_EMBEDDING = "offline/hashing"  # == pipeline.config.OFFLINE_EMBEDDING; literal so --help needs no import


def embedder_for(model: str, api_base: str | None = None, fallback_api_base: str | None = None) -> Embedder:
    """The embedder a run configured with these values uses (``factories.embedder_from``), so the CLI
    measures overlap and clusters labels with the same model as the pipeline's retrieval. Like
    ``EvalConfig.effective_embedding_api_base``, the embedding server falls back to ``fallback_api_base``."""
    from interviewsim_core.factories import embedder_from

    return embedder_from(model, api_base or fallback_api_base)


def parse_pairs(values: list[str] | None) -> list[tuple[str, str]] | None:
    """``["A:B", ...]`` -> ``[("A", "B"), ...]``; None when no pair was given (default pairs).

    Raises:
        ConfigError: an entry is not two non-empty, distinct method names around one ``:``.
    """
    from interviewsim_core.errors import ConfigError

    if not values:
        return None
    pairs = []
    for v in values:
        a, sep, b = v.partition(":")
        a, b = a.strip(), b.strip()
        if not sep or not a or not b or ":" in b or a == b:
            raise ConfigError(f"--pair {v!r}: expected two different methods as A:B, e.g. chrono-100:simple")
        pairs.append((a, b))
    return pairs


def _check_methods(data_root: Path, wanted: list[str] | None, pairs: list[tuple[str, str]] | None) -> None:
    """Refuse methods with no tables before the (slow) build: a misspelt name would otherwise give
    an empty report column or a paired test over zero personalities."""
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.report.loading import load_tables

    if not wanted and not pairs:
        return
    found: set[str] = set()
    for table in load_tables(data_root, ("method_scores", "generations")).values():
        found.update(str(m) for m in table["method"].dropna().unique())
    listing = ", ".join(sorted(found)) or "none"
    missing = sorted(set(wanted or []) - found)
    if missing:
        raise ConfigError(f"no tables for method(s) {', '.join(missing)} under {data_root} (found: {listing})")
    usable = set(wanted) if wanted else found
    outside = sorted({m for p in pairs or [] for m in p} - usable)
    if outside:
        raise ConfigError(f"--pair method(s) {', '.join(outside)} not among the reported methods "
                          f"({', '.join(sorted(usable)) or 'none'})")


def _split(value: str | None) -> list[str] | None:
    names = [m.strip() for m in value.split(",") if m.strip()] if value else []
    return names or None


def report(
    data_root: Annotated[Path, typer.Option("--data-root", help="Folder the evaluation wrote its Parquet tables to.")],
    out: Annotated[Optional[Path], typer.Option("--out", help="Output folder (default: <data-root>/report).")] = None,
    categories: Annotated[Optional[Path], typer.Option(
        "--categories", help="Optional CSV with columns personality_id, category (breakdown by category); "
        "default: the categories the data root's curation gave (its qa_tags table), when it has them.")] = None,
    human_labels: Annotated[Optional[Path], typer.Option(
        "--human-labels", help="Optional CSV of human judgments (personality_id, method, qa_id, metric, value; "
        "metrics cs, fc, mcq_item_valid): each judge's agreement with them.")] = None,
    methods: Annotated[Optional[str], typer.Option(
        "--methods", help="Comma-separated methods to report (default: every method found under --data-root).")] = None,
    pair: Annotated[Optional[list[str]], typer.Option(
        "--pair", help="Paired test between two methods, A:B (a - b); repeatable. Default: the paper's pairs.")] = None,
    embedding_model: Annotated[str, typer.Option(
        "--embedding-model", help="Embedder of the train-test overlap and premise label clustering: "
        "offline/hashing or a litellm embedding model.")] = _OFFLINE_EMBEDDING,
    embedding_api_base: Annotated[Optional[str], typer.Option(
        "--embedding-api-base", help="Base URL of the embedding server.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap and permutation draws.")] = 0,
    coverage_threshold: Annotated[float, typer.Option(
        "--coverage-threshold", min=0.0, max=1.0,
        help="A method with fewer valid cells than this share of the expected ones is flagged and never "
        "marked best (EvalConfig.coverage_threshold).")] = 0.95,
) -> None:
    """Write report.html and report.json for the run under --data-root."""
    from interviewsim_core.errors import ConfigError, InputValidationError
    from interviewsim_core.report import build_report, leaderboard_markdown, write_report

    if not data_root.is_dir():
        typer.echo(f"error: --data-root {data_root} is not a folder", err=True)
        raise typer.Exit(2)
    if categories is not None and not categories.is_file():
        typer.echo(f"error: --categories {categories} is not a file", err=True)
        raise typer.Exit(2)
    wanted = _split(methods)
    try:
        pairs = parse_pairs(pair)
        _check_methods(data_root, wanted, pairs)
        embedder = embedder_for(embedding_model, embedding_api_base)
        data = build_report(data_root, categories_csv=categories, human_labels_csv=human_labels,
                            embedder=embedder, methods=wanted, pairs=pairs, seed=seed,
                            coverage_threshold=coverage_threshold)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except InputValidationError as exc:  # the human labels file: every problem, nothing written
        typer.echo(f"error: --human-labels {exc}", err=True)
        raise typer.Exit(2) from None
    paths = write_report(data_root, out, report_data=data)
    typer.echo(leaderboard_markdown(data, with_ci=False))
    not_run = [s.title for s in data.sections.values() if s.status != "ok"]
    if not_run:
        typer.echo("\nNot run: " + "; ".join(not_run))
    typer.echo(f"\nreport: {paths.html}\njson:   {paths.json}")
    if out is None:  # the data root's own report, which the explorer serves
        from interviewsim_view.urls import explorer_command, explorer_url, report as report_page

        typer.echo(f"in the explorer: {explorer_url(path=report_page())} (start it: {explorer_command(str(data_root))})")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
