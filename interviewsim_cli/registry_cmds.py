"""``interviewsim unregister``: remove personality partitions from the Dagster instance.

The default ``DAGSTER_HOME`` is shared across corpora, so personalities registered from another
corpus (or whose file was since removed) stay partitions. ``run`` skips them with a warning; this
command removes them for good. Their Parquet files under the data root are left in place (they are
results someone paid for); the leaderboard and the UI stop listing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from interviewsim_core.id_lists import fits_whole, summarise_ids

from .id_files import ids_line

__all__ = ["register"]


def unregister(
    ids: Annotated[Optional[list[str]], typer.Argument(help="Personality ids to remove.")] = None,
    not_in: Annotated[Optional[Path], typer.Option(
        "--not-in", help="Also remove every registered personality without a valid document in this corpus.")] = None,
) -> None:
    """Remove personality partitions (exit 1 when an id given is not registered)."""
    import dagster as dg

    from interviewsim_dagster.defs.corpus.partitions import PERSONALITY

    from .run_cmds import ensure_dagster_home

    if not ids and not_in is None:
        typer.echo("give personality ids, or --not-in CORPUS", err=True)
        raise typer.Exit(2)
    ensure_dagster_home()
    with dg.DagsterInstance.get() as instance:
        registered = list(instance.get_dynamic_partitions(PERSONALITY))
        wanted = list(dict.fromkeys(ids or []))
        if not_in is not None:
            from interviewsim_dagster.registration import scan_corpus

            valid = scan_corpus(not_in.resolve()).valid
            wanted += [pid for pid in registered if pid not in valid and pid not in wanted]
        unknown = [pid for pid in wanted if pid not in registered]
        removed = [pid for pid in wanted if pid in registered]
        for pid in removed:
            instance.delete_dynamic_partition(PERSONALITY, pid)
    if fits_whole(removed):
        for pid in removed:
            typer.echo(f"unregistered: {pid}")
    else:
        typer.echo(f"unregistered {len(removed):,} personality partition(s): {ids_line(removed, 'unregistered')}")
    if unknown:  # the registered ones said once, however many ids were unknown
        typer.echo(f"not registered: {summarise_ids([repr(pid) for pid in unknown], 'as given on the command line')} "
                   f"(registered: {ids_line([p for p in registered if p not in removed], 'personalities')})", err=True)
    if not wanted:
        typer.echo("nothing to unregister")
    raise typer.Exit(1 if unknown else 0)


def register(app: typer.Typer) -> None:
    app.command("unregister")(unregister)
