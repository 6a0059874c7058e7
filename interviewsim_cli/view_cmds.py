"""``interviewsim view --data-root DIR [--corpus DIR]`` or ``--config FILE``: the results explorer over a run's
Parquet tables.

Serves the pages of ``interviewsim_view`` with uvicorn on 127.0.0.1 (a reviewer's machine, not a
public server: ``--host`` changes that deliberately). Results are only read; human labels are
written to ``--labels`` (default ``<data-root>/human_labels.csv``). ``--corpus`` adds the curation
review pages over a folder ``interviewsim curate --out`` wrote (alone, without ``--data-root``: only
those pages), where a reviewer's decisions go to ``<corpus>/review.csv``. ``--config`` reads the three from
the run's own config (``data_root``, its cache, and ``corpus`` when it curates: transcripts and manifest), so
a researcher who ran ``interviewsim run --config FILE`` opens the same folders without retyping them; flags
given beside it win.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register", "view"]


def view(
    data_root: Annotated[Optional[str], typer.Option(
        "--data-root", help="Folder (or file:// / s3:// URL) the run wrote its tables to.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    labels: Annotated[Optional[Path], typer.Option(
        "--labels", help="Human labels CSV to write (default <data-root>/human_labels.csv; required for a URL root).")] = None,
    cache: Annotated[Optional[Path], typer.Option(
        "--cache", help="Model-call cache, for the exact prompts (default <data-root>/.cache/llm.sqlite).")] = None,
    blind: Annotated[bool, typer.Option("--blind", help="Hide the judges' scores and explanations while labelling.")] = False,
    corpus: Annotated[Optional[Path], typer.Option(
        "--corpus", help="A curated corpus folder (curate --out): review its transcripts at /curation.")] = None,
    config: Annotated[Optional[Path], typer.Option(
        "--config", help="The run's YAML/TOML config: its data_root, cache and (when it curates) corpus; flags win.")] = None,
) -> None:
    """Open the results explorer: leaderboard, question views, filters, personality and premise pages, labels."""
    import uvicorn

    from interviewsim_view.app import ViewConfig, corpus_problem, create_app, data_root_problem
    from interviewsim_view.urls import explorer_url, report

    from interviewsim_view.urls import curation

    if config is not None:
        data_root, corpus, cache = from_config(config, data_root, corpus, cache)
    if data_root is None and corpus is None:
        typer.echo("error: give --data-root DIR (a run's tables), --corpus DIR (a curated corpus), or both", err=True)
        raise typer.Exit(2)
    problem = (data_root_problem(data_root) if data_root is not None else None) or corpus_problem(corpus)
    if problem:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)
    app = create_app(ViewConfig(data_root=data_root, labels=labels, cache=cache, blind=blind, corpus=corpus))
    if data_root is not None:
        typer.echo(f"InterviewSim explorer on {explorer_url(host, port)} (data root {app.state.store.label}; "
                   f"labels {app.state.labels_path or 'off: give --labels'}; the report at "
                   f"{explorer_url(host, port, report())}); Ctrl-C stops it")
    if corpus is not None:
        typer.echo(f"curation review of {corpus} on {explorer_url(host, port, curation())}"
                   f"{'' if data_root is not None else '; Ctrl-C stops it'}")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def from_config(config: Path, data_root: str | None, corpus: Path | None,
                cache: Path | None) -> tuple[str | None, Path | None, Path | None]:
    """(data root, corpus, cache) of the run ``config`` describes, each flag given beside it kept instead.

    The corpus only when the config curates: otherwise it is the run's input, not curation output, and the
    review pages would refuse it."""
    from interviewsim_core.curation.stage import curates

    from .run_cmds import _config

    cfg = _config({}, config)
    return (data_root if data_root is not None else str(cfg.data_root),
            corpus if corpus is not None else (Path(cfg.corpus) if curates(cfg) else None),
            cache if cache is not None else cfg.cache_path)  # None: the explorer's <data-root>/.cache default


def register(app: typer.Typer) -> None:
    app.command("view")(view)
