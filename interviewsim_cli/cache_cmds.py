"""``interviewsim cache show KEY``: the exact prompt a cached model call sent, and its answer;
``interviewsim cache compact``: pack what killed processes left loose.

The cache stores prompts deduplicated and compressed (``llm/cache.py``), so they cannot be read
with ``sqlite3`` directly; this command rebuilds them. Keys are in every result table's
``cache_key`` column. A key prefix is enough when it is unique.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register"]

cache_app = typer.Typer(help="Inspect the model-call cache.", no_args_is_help=True)


CacheOption = Annotated[Optional[Path], typer.Option(help="Cache file; default <data-root>/.cache/llm.sqlite.")]
DataRootOption = Annotated[Path, typer.Option(help="Data root of the run.")]


def _open(cache: Optional[Path], data_root: Path):
    """The SQLite cache a command names (``--cache``, else the data root's); exit 1 when there is none."""
    from interviewsim_core.llm.cache import SqliteCache

    path = cache or data_root / ".cache" / "llm.sqlite"
    if not path.is_file():
        typer.echo(f"no cache file at {path}", err=True)
        raise typer.Exit(1)
    return path, SqliteCache(path)


@cache_app.command("show")
def show_command(
    key: Annotated[str, typer.Argument(help="Cache key (or a unique prefix), from a table's cache_key column.")],
    cache: CacheOption = None,
    data_root: DataRootOption = Path("data_out"),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
) -> None:
    """Print the messages a cached call sent and the raw answer it got (exit 1 if not cached)."""
    path, store = _open(cache, data_root)
    try:
        matches = store.keys_with_prefix(key)
        if len(matches) != 1:
            typer.echo(f"{len(matches)} cached calls match {key!r} in {path}" + (": give more of the key" if matches else ""),
                       err=True)
            raise typer.Exit(1)
        entry = store.get(matches[0])
    finally:
        store.close()
    assert entry is not None
    if as_json:
        typer.echo(json.dumps({"key": matches[0], "model": entry.model, "contract": entry.contract,
                               "messages": list(entry.messages), "raw": entry.raw}, ensure_ascii=False, indent=2))
        return
    typer.echo(f"key: {matches[0]}\nmodel: {entry.model}\ncontract: {entry.contract}")
    for m in entry.messages:
        typer.echo(f"\n--- {m['role']} ---\n{m['content']}")
    typer.echo(f"\n--- answer ---\n{entry.raw}")


@cache_app.command("compact")
def compact_command(cache: CacheOption = None, data_root: DataRootOption = Path("data_out")) -> None:
    """Pack the prompt chunks that processes left loose (killed ones, or ones that never closed the
    cache); runs do this themselves as they go, so this only makes the file smaller now."""
    path, store = _open(cache, data_root)
    try:
        before, packed = path.stat().st_size, 0
        while (done := store.compact()) > 0:
            packed += done
    finally:
        store.close()
    typer.echo(f"{path}: packed {packed / 1e3:.0f} KB of prompt chunks; file {before / 1e6:.2f} -> "
               f"{path.stat().st_size / 1e6:.2f} MB")


def register(app: typer.Typer) -> None:
    """Add ``cache`` to the ``interviewsim`` app."""
    app.add_typer(cache_app, name="cache")
